//go:build !unix

package capture

import (
	"io"
	"os"
)

// mappedPeeker is only for unix systems; elsewhere OpenMapped reads.
type mappedPeeker struct{ peeker }

func mapFile(*os.File) *mappedPeeker { return nil }

func (p *mappedPeeker) unmap() {}

func (p *mappedPeeker) readAt([]byte, int64) bool { return false }

func (p *mappedPeeker) Read([]byte) (int, error) { return 0, io.EOF }

func (p *mappedPeeker) Size() int { return 0 }
