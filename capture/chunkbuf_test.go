package capture

import "testing"

// TestChunkBuffers: the buffers are ChunkSize each, apart, writable, and
// zero again once released and taken anew (the mapping is reused).
func TestChunkBuffers(t *testing.T) {
	for round := 0; round < 3; round++ {
		bufs, release := ChunkBuffers(3)
		if len(bufs) != 3 {
			t.Fatalf("%d buffers", len(bufs))
		}
		for i, b := range bufs {
			if len(b) != 0 || cap(b) != ChunkSize {
				t.Fatalf("buffer %d: len %d cap %d", i, len(b), cap(b))
			}
			b = b[:ChunkSize]
			for j := range b {
				if b[j] != 0 {
					t.Fatalf("round %d, buffer %d: octet %d is %d", round, i, j, b[j])
				}
			}
			for j := range b {
				b[j] = byte(i + 1)
			}
		}
		for i, b := range bufs {
			if b[:ChunkSize][ChunkSize-1] != byte(i+1) || b[:1][0] != byte(i+1) {
				t.Fatalf("buffer %d overlaps another", i)
			}
		}
		release()
	}
}
