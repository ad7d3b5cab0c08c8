package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/bundle"
	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/doccmd"
)

// derivedFile is one file of the repository that the code renders.
type derivedFile struct {
	path string // from the repository root, slash-separated
	want []byte
	// same says whether committed content already is want; nil: byte for
	// byte.
	same func(committed, want []byte) bool
}

// upToDate reports whether the committed file is f's content, and reads it.
func (f derivedFile) upToDate(root string) (bool, []byte, error) {
	have, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.path)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil, nil
	case err != nil:
		return false, nil, err
	case f.same != nil:
		return f.same(have, f.want), have, nil
	}
	return bytes.Equal(have, f.want), have, nil
}

// write brings the file to its rendered content, touching it only when it
// is not up to date, and reports whether it did.
func (f derivedFile) write(root string) (bool, error) {
	ok, _, err := f.upToDate(root)
	if ok || err != nil {
		return false, err
	}
	path := filepath.Join(root, filepath.FromSlash(f.path))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	return true, os.WriteFile(path, f.want, 0o644)
}

// bundleFiles renders manifest.json and server.json.
func bundleFiles(ctx context.Context) ([]derivedFile, error) {
	listed, prompts, err := bundle.Surface(ctx)
	if err != nil {
		return nil, err
	}
	manifest, err := bundle.Manifest(listed, prompts)
	if err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	entry, err := bundle.ServerJSON()
	if err != nil {
		return nil, fmt.Errorf("server.json: %w", err)
	}
	return []derivedFile{{path: "manifest.json", want: manifest}, {path: "server.json", want: entry}}, nil
}

// docImages runs every command of the docs that writes images
// (--image-dir DIR), as the doc shows it, from the repository root with the
// images going to a temporary directory, and returns each image it wrote
// as the file of that name in DIR. cleanup removes the temporary
// directory.
func docImages(ctx context.Context, root string) (files []derivedFile, cleanup func(), err error) {
	tmp, err := os.MkdirTemp("", "stac-mcp-gen-")
	if err != nil {
		return nil, func() {}, err
	}
	cleanup = func() { os.RemoveAll(tmp) } //nolint:errcheck // a leftover temporary directory is not a failed generation
	docs, err := doccmd.Files(root)
	if err != nil {
		return nil, cleanup, err
	}
	n := 0
	for _, doc := range docs {
		raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(doc)))
		if err != nil {
			return nil, cleanup, err
		}
		for _, b := range doccmd.Split(string(raw)) {
			cmds, err := doccmd.Commands(b)
			if err != nil {
				return nil, cleanup, fmt.Errorf("%s:%w", doc, err)
			}
			for _, c := range cmds {
				if c.ImageDir() == "" {
					continue
				}
				n++
				out := filepath.Join(tmp, fmt.Sprint(n))
				written, err := runDocCommand(ctx, root, c.WithImageDir(out), out, filepath.Join(tmp, fmt.Sprint(n, "-state")))
				if err != nil {
					return nil, cleanup, fmt.Errorf("%s:%d: %s: %w", doc, c.Line, c.Text, err)
				}
				for _, img := range written {
					files = append(files, derivedFile{path: c.ImageDir() + "/" + img.name, want: img.data, same: doccmd.SameImage})
				}
			}
		}
	}
	return files, cleanup, nil
}

// runDocCommand runs `go run ./cmd/stac-mcp args…` in root, as a reader of
// the doc would, but without the caller's STAC_MCP_* settings and with a
// state directory of its own (as TestDocCommands does), and returns the
// images it wrote into imageDir, the directory args give --image-dir.
func runDocCommand(ctx context.Context, root string, args []string, imageDir, stateDir string) ([]image, error) {
	cmd := exec.CommandContext(ctx, "go", append([]string{"run", "./cmd/stac-mcp"}, args...)...)
	cmd.Dir = root
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STAC_MCP_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "STAC_MCP_STATE_DIR="+stateDir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%w\n%s", err, stderr.String())
	}
	entries, err := os.ReadDir(imageDir) // sorted by name
	if err != nil {
		return nil, fmt.Errorf("it wrote no image: %w", err)
	}
	var written []image
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(imageDir, e.Name()))
		if err != nil {
			return nil, err
		}
		written = append(written, image{e.Name(), data})
	}
	return written, nil
}

// image is a file a command wrote.
type image struct {
	name string
	data []byte
}
