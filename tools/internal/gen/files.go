package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// derivedFile is one file of the repository that the code renders.
type derivedFile struct {
	path string // from the repository root, slash-separated
	want []byte // the content; nil: the file must not exist (the snapshot of a tool no longer listed)
	// same says whether the committed content (not nil) already is want;
	// nil: byte for byte.
	same func(committed, want []byte) bool
}

// committed reads the file as it is in the working tree; nil when it does
// not exist.
func (f derivedFile) committed(root string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.path)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// write brings the file to its rendered content (or removes it), touching
// it only when it differs, and reports whether it did.
func (f derivedFile) write(root string) (bool, error) {
	have, err := f.committed(root)
	if err != nil {
		return false, err
	}
	path := filepath.Join(root, filepath.FromSlash(f.path))
	switch {
	case f.want == nil && have == nil, f.want != nil && have != nil && f.upToDate(have):
		return false, nil
	case f.want == nil:
		return true, os.Remove(path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	return true, os.WriteFile(path, f.want, 0o644)
}

// upToDate reports whether the committed content have is f's.
func (f derivedFile) upToDate(have []byte) bool {
	if f.same != nil {
		return f.same(have, f.want)
	}
	return bytes.Equal(have, f.want)
}
