package stacserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Several processes may write one catalog directory (two stdio servers of
// two desktop windows, concurrent `stac-mcp call`s). Each holds its own
// copy of the catalog in memory, so without care the second writer builds
// on a stale copy: its patch erases the first's, an item deleted by one
// comes back from the other, two creates each append a link to their own
// copy of the collection file and one link is lost.
//
// So every write, under writeMu:
//  1. takes an exclusive advisory lock on lockFileName in the catalog
//     directory (flock on unix, LockFileEx on Windows; waiting at most
//     lockWait, then a 503 that writes nothing);
//  2. re-reads the catalog from disk when it changed since this server last
//     saw it: the lock file holds a generation token that every writer
//     replaces before it writes, and the files the write touches are
//     compared with what was loaded or last written (size, modification
//     time, inode). The first write of a server always re-reads, as the
//     server cannot know what happened between its load and then;
//  3. decides on the fresh copy (a patch applies to the document as it is
//     on disk, a deleted item is a 404, a create sees every link), writes,
//     and releases the lock.
//
// Readers take no lock; they see this server's copy, refreshed by its
// writes.

// lockFileName is the advisory lock and generation token of a writable
// catalog directory. The loader never reads it (nothing links to it).
const lockFileName = ".stac-mcp.lock"

// lockWait bounds how long a write waits for another process's write.
const lockWait = 10 * time.Second

// fileStamp identifies a version of a file.
type fileStamp struct {
	size, mtime int64
	id          uint64 // inode where the platform has one
}

func stampOf(info fs.FileInfo) fileStamp {
	return fileStamp{size: info.Size(), mtime: info.ModTime().UnixNano(), id: fileIdentity(info)}
}

// diskState is what a writable server knows of its catalog's files;
// guarded by writeMu.
type diskState struct {
	gen    string               // the generation token this server's copy reflects ("" unknown)
	stamps map[string]fileStamp // of the files the copy was loaded from or written to
}

// lockedCatalog is a held catalog lock.
type lockedCatalog struct{ f *os.File }

// lockCatalog takes the catalog's advisory lock, waiting up to lockWait.
// It gives up when closing is set (the server is shutting down).
func (d *dirWriter) lockCatalog(ctx context.Context, closing *atomic.Bool) (*lockedCatalog, error) {
	f, err := d.root.OpenFile(lockFileName, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the catalog's lock file %s: %w", lockFileName, err)
	}
	deadline := time.Now().Add(lockWait)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		ok, err := tryLockFile(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("locking the catalog (%s): %w", lockFileName, err)
		}
		if ok {
			return &lockedCatalog{f: f}, nil
		}
		if closing.Load() {
			f.Close()
			return nil, errShuttingDown
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, unavailable("another process has been writing this catalog for more than %s (it holds %s): nothing was written; try again later", lockWait, lockFileName)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, unavailable("the request ended while waiting for another process's write to this catalog: nothing was written")
		case <-t.C:
		}
	}
}

func (l *lockedCatalog) unlock() {
	_ = unlockFile(l.f)
	_ = l.f.Close() // closing releases the lock anyway
}

// gen is the generation token in the lock file ("" when none).
func (l *lockedCatalog) gen() string {
	var buf [64]byte
	n, err := l.f.ReadAt(buf[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	return strings.TrimSpace(string(buf[:n]))
}

// newGen replaces the generation token, before anything is written: a
// process that dies halfway leaves a token nobody has seen, so every other
// server re-reads the catalog before its next write.
func (l *lockedCatalog) newGen() (string, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	gen := hex.EncodeToString(b[:])
	if _, err := l.f.WriteAt([]byte(gen+"\n"), 0); err != nil {
		return "", err
	}
	if err := l.f.Truncate(int64(len(gen) + 1)); err != nil {
		return "", err
	}
	return gen, l.f.Sync()
}

// changedOnDisk reports whether any of files differs from the server's
// stamp of it (a file without a stamp is not compared).
func (s *Server) changedOnDisk(d *dirWriter, files []string) bool {
	for _, f := range files {
		old, known := s.disk.stamps[f]
		if f == "" || !known {
			continue
		}
		info, err := d.root.Stat(filepath.FromSlash(f))
		if err != nil || stampOf(info) != old {
			return true
		}
	}
	return false
}

// refresh re-reads the catalog when another process changed it (see the
// top of this file); files are those the write will read or rewrite.
func (s *Server) refresh(ctx context.Context, d *dirWriter, lk *lockedCatalog, files []string) error {
	gen := lk.gen()
	if s.disk.gen != "" && gen == s.disk.gen && !s.changedOnDisk(d, files) {
		return nil
	}
	var limits LoadOptions
	if w := s.opts.Writes; w != nil {
		limits = w.Limits
	}
	st, err := LoadFSContext(ctx, d.root.FS(), d.rootFile, limits)
	if err != nil && ctx.Err() != nil {
		// The request ended (its client gave up or timed out) while the
		// files were read: that says nothing about them, and a 409 would
		// tell the client, which stores a refusal as the write's outcome,
		// that the catalog is broken. A 503 says to look and send again.
		return unavailable("the request ended while this server re-read the catalog's files before writing: nothing was written")
	}
	if err != nil {
		return conflict("the catalog's files changed since this server read them, and they no longer load (%v): nothing was written", err)
	}
	st.freeze()
	s.state.Store(st)
	s.disk = diskState{gen: gen, stamps: st.stamps}
	return nil
}

// affectedFiles are the files a write on collection cid (and item iid)
// reads or rewrites in st: the root catalog, the collection's file, the
// item's file.
func (d *dirWriter) affectedFiles(st *Store, cid, iid string) []string {
	files := []string{d.rootFile}
	if c, ok := st.collections[cid]; ok {
		files = append(files, c.file)
		if it, ok := c.byID[iid]; ok && iid != "" {
			f, _ := fileOf(it)
			files = append(files, f, it.linkedFrom)
		}
	}
	return files
}

// written records the stamps of the files a successful write touched, so
// that the next write does not take them for another process's change.
func (s *Server) written(d *dirWriter, gen string) {
	if s.disk.stamps == nil {
		s.disk.stamps = map[string]fileStamp{}
	}
	for _, f := range d.touched {
		if info, err := d.root.Stat(filepath.FromSlash(f)); err == nil {
			s.disk.stamps[f] = stampOf(info)
		} else {
			delete(s.disk.stamps, f)
		}
	}
	s.disk.gen = gen
}

// persistError is the answer to a change that could not be written.
// Problems the catalog's layout makes permanent (a folder that is a
// symbolic link out of the catalog directory, a name the file system
// refuses) are refusals that a retry cannot fix; other I/O errors stay
// 500s. Either way the change was not made (at worst an unlinked file was
// left, which the loader never reads).
func persistError(err error) error {
	var api *apiError
	if errors.As(err, &api) {
		return api
	}
	const notMade = "the change could not be written to the catalog's files, so it was not made: "
	switch {
	// os.Root's error for a path (or a symbolic link on it) that leads out
	// of the catalog directory has no exported sentinel.
	case strings.Contains(err.Error(), "path escapes from parent"):
		return conflict("%s%v (a folder or file on the way is a symbolic link leading out of the catalog directory; stac-mcp writes only inside it)", notMade, err)
	case errors.Is(err, syscall.ENAMETOOLONG):
		return conflict("%s%v (a file name too long for the file system)", notMade, err)
	case errors.Is(err, syscall.ENOTDIR):
		return conflict("%s%v (a path on the way is a file, not a folder)", notMade, err)
	}
	return &apiError{status: 500, code: "InternalServerError", description: notMade + err.Error()}
}

// isTempFile reports whether name is one of writeJSON's temporary files
// (".<name>.tmp-<12 hex digits>").
func isTempFile(name string) bool {
	i := strings.LastIndex(name, ".tmp-")
	if !strings.HasPrefix(name, ".") || i < 1 || len(name)-i-len(".tmp-") != 12 {
		return false
	}
	_, err := hex.DecodeString(name[i+len(".tmp-"):])
	return err == nil
}

// removeStaleTempFiles deletes the temporary files a process killed while
// writing left in the catalog's folders (the ones the store's files live
// in). It runs only when it gets the catalog lock at once: under it no
// other process is writing, so every temporary file is stale.
func (s *Server) removeStaleTempFiles(d *dirWriter, st *Store) {
	lk, err := d.tryLock()
	if err != nil || lk == nil {
		return
	}
	defer lk.unlock()
	dirs := map[string]bool{path.Dir(d.rootFile): true}
	for f := range st.stamps {
		dirs[path.Dir(f)] = true
	}
	for dir := range dirs {
		entries, err := fs.ReadDir(d.root.FS(), dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.Type().IsRegular() && isTempFile(e.Name()) {
				_ = d.root.Remove(filepath.FromSlash(path.Join(dir, e.Name())))
			}
		}
	}
}

// tryLock takes the catalog lock if it is free (nil when it is not).
func (d *dirWriter) tryLock() (*lockedCatalog, error) {
	f, err := d.root.OpenFile(lockFileName, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	ok, err := tryLockFile(f)
	if err != nil || !ok {
		f.Close()
		return nil, err
	}
	return &lockedCatalog{f: f}, nil
}

// errShuttingDown answers a write that arrives while the server drains.
var errShuttingDown = unavailable("the server is shutting down: nothing was written; send the write again once it runs")

// Drain lets the write in progress finish, for at most timeout, and
// refuses every later one; it reports whether the writes ended in time. A
// process that exits on SIGTERM calls it before closing the catalog
// directory, so that no file is left half-written (a write cut short
// leaves a temporary file, which the next load removes, and no change).
func (s *Server) Drain(timeout time.Duration) bool {
	s.closing.Store(true)
	done := make(chan struct{})
	go func() {
		// Once closing is set, a write that takes writeMu refuses at once:
		// holding it here means the last write has ended.
		s.writeMu.Lock()
		close(done)
		s.writeMu.Unlock()
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
