//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package stacserver

import (
	"io/fs"
	"os"
)

// tryLockFile: this platform has no advisory file lock that this package
// uses, so writes are serialised within the process only (writeMu) and two
// processes writing one catalog may still race; the generation check of
// disk.go still makes each write start from what the other last wrote.
func tryLockFile(*os.File) (bool, error) { return true, nil }

func unlockFile(*os.File) error { return nil }

func fileIdentity(fs.FileInfo) uint64 { return 0 }
