//go:build !linux

package capture

import "os"

// cachedFile is the file itself where preadv2 with RWF_NOWAIT is not
// (cachedread_linux.go).
type cachedFile struct{ f *os.File }

func newCachedFile(f *os.File) *cachedFile { return &cachedFile{f: f} }

func (c *cachedFile) Read(p []byte) (int, error) { return c.f.Read(p) }
