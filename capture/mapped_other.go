//go:build !unix

package capture

import "os"

// mappedPeeker is only for unix systems; elsewhere OpenMapped reads.
type mappedPeeker struct{ peeker }

func mapFile(*os.File) *mappedPeeker { return nil }

func (p *mappedPeeker) unmap() {}

func (p *mappedPeeker) readAt([]byte, int64) bool { return false }
