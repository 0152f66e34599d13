//go:build !linux

package capture

// ChunkBuffers returns n buffers of capacity ChunkSize for
// ChunkReader.Next, and what releases them once they are no longer used
// (from the heap here; on Linux from a mapping backed by huge pages).
func ChunkBuffers(n int) (bufs [][]byte, release func()) { return heapChunkBuffers(n) }
