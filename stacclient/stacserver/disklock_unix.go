//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package stacserver

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// tryLockFile takes an exclusive advisory lock (flock) on f without
// waiting: false when another open file description holds it. flock locks
// belong to the open file, so two Servers of one process conflict exactly
// as two processes do.
func tryLockFile(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		return false, nil
	}
	return false, err
}

func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// fileIdentity is the inode of a file: every atomic replacement (temp file
// + rename) gives the file a new one, so it tells a rewrite apart even when
// the size and the modification time (coarse on some file systems) match.
func fileIdentity(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino) //nolint:unconvert // Ino is not uint64 on every platform
	}
	return 0
}
