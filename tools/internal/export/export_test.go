package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

func TestDirWritesUniqueNamesNeverOverwriting(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "Downloads", "stac-mcp")
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("folder mode %v, %v", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Dir(dir)); err != nil || fi.Mode().Perm()&0o700 != 0o700 {
		t.Fatalf("a missing Downloads folder was made %v, %v", fi.Mode(), err)
	}
	// Someone else's file, and a symbolic link pointing outside, under
	// the names the export would take first.
	if err := os.WriteFile(filepath.Join(dir, "ndvi.tif"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(base, "outside.tif")
	if err := os.Symlink(outside, filepath.Join(dir, "ndvi-2.tif")); err != nil {
		t.Fatal(err)
	}
	w, err := d.Write(context.Background(), "ndvi", ".tif", 0, writeString("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != "ndvi-3.tif" || w.Path != filepath.Join(dir, "ndvi-3.tif") || w.Bytes != 5 {
		t.Errorf("written %+v", w)
	}
	sum := sha256.Sum256([]byte("hello"))
	if w.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("sha256 %s", w.SHA256)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "ndvi.tif")); string(b) != "mine" {
		t.Errorf("the existing file now holds %q", b)
	}
	if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("something was written through the symbolic link: %v", err)
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{"ndvi-2.tif", "ndvi-3.tif", "ndvi.tif"}) {
		t.Errorf("folder holds %v", got)
	}
}

func TestDirLeavesNothingOnFailure(t *testing.T) {
	dir := t.TempDir()
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	full := errors.New("no space left on device")
	cases := map[string]struct {
		ctx   context.Context
		limit int64
		write func(io.Writer) error
		want  error
	}{
		"the writer fails (a full disk)": {ctx, 0, func(w io.Writer) error {
			_, _ = io.WriteString(w, "partial")
			return full
		}, full},
		"over the limit": {ctx, 4, writeString("too long"), ErrTooLarge},
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	cases["cancelled"] = struct {
		ctx   context.Context
		limit int64
		write func(io.Writer) error
		want  error
	}{cancelled, 0, writeString("x"), context.Canceled}
	for name, c := range cases {
		if _, err := d.Write(c.ctx, "x", ".csv", c.limit, c.write); !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", name, err, c.want)
		}
		if got := listDir(t, dir); len(got) != 0 {
			t.Errorf("%s: left %v", name, got)
		}
	}
	for _, bad := range []string{"../x", "a/b", `a\b`, "..", ".hidden", "", "C:x", "a\x00b", strings.Repeat("a", 101)} {
		if _, err := d.Write(ctx, bad, ".csv", 0, writeString("x")); err == nil {
			t.Errorf("name %q accepted", bad)
		}
	}
	if got := listDir(t, dir); len(got) != 0 {
		t.Errorf("left %v", got)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{"S2A_13TDE_20230803_0_L2A": "S2A_13TDE_20230803_0_L2A", "../../etc/passwd": "_.._etc_passwd", "": "export", "a b/é": "a_b__"} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
		if p := NameProblem(Slug(in) + ".tif"); p != "" {
			t.Errorf("Slug(%q) makes a bad name: %s", in, p)
		}
	}
}

func TestDefaultDirFollowsXDG(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	t.Setenv("XDG_DOWNLOAD_DIR", "")
	cfg := filepath.Join(home, "cfg")
	t.Setenv("XDG_CONFIG_HOME", cfg)
	got, err := DefaultDir()
	if err != nil || got != filepath.Join(home, "Downloads", "stac-mcp") {
		t.Errorf("DefaultDir() = %q, %v", got, err)
	}
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "user-dirs.dirs"), []byte("XDG_DOWNLOAD_DIR=\"$HOME/Téléchargements\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := DefaultDir(); got != filepath.Join(home, "Téléchargements", "stac-mcp") {
		t.Errorf("with user-dirs.dirs: %q", got)
	}
}

func TestVaultIsPerCallerBoundedAndExpires(t *testing.T) {
	local, err := NewLocal("")
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	now := time.Now()
	local.now = func() time.Time { return now }
	v := NewVault(local, time.Hour, 10, 15)
	v.now = local.now
	ctx := context.Background()
	a, err := v.Put(ctx, "token:a", "x.csv", "text/csv", 0, writeString("12345678"))
	if err != nil {
		t.Fatal(err)
	}
	if _, data, err := v.Get(ctx, "token:a", a.ID); err != nil || string(data) != "12345678" {
		t.Errorf("the maker reads %q, %v", data, err)
	}
	if _, _, err := v.Get(ctx, "token:b", a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("another caller reads it: %v", err)
	}
	if _, err := v.Put(ctx, "token:a", "y.csv", "text/csv", 0, writeString("abc")); !errors.Is(err, ErrCallerQuota) {
		t.Errorf("over the caller's quota: %v", err)
	}
	if _, err := v.Put(ctx, "token:b", "y.csv", "text/csv", 0, writeString("12345678")); !errors.Is(err, ErrTotalQuota) {
		t.Errorf("over the total quota: %v", err)
	}
	if _, err := v.Put(ctx, "token:b", "y.csv", "text/csv", 4, writeString("12345")); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the export limit: %v", err)
	}
	if n, b := local.Held(); n != 1 || b != 8 {
		t.Errorf("held %d files, %d bytes", n, b)
	}
	now = now.Add(time.Hour)
	if _, _, err := v.Get(ctx, "token:a", a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("expired, read: %v", err)
	}
	if got := listDir(t, local.Dir()); len(got) != 0 {
		t.Errorf("expired exports left %v", got)
	}
	if _, err := v.Put(ctx, "token:b", "y.csv", "text/csv", 0, writeString(string(bytes.Repeat([]byte("z"), 10)))); err != nil {
		t.Errorf("after expiry the quota is free again: %v", err)
	}
}
