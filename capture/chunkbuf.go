package capture

import "unsafe"

// heapChunkBuffers returns n buffers of capacity ChunkSize from the heap.
func heapChunkBuffers(n int) ([][]byte, func()) {
	bufs := make([][]byte, n)
	for i := range bufs {
		bufs[i] = make([]byte, 0, ChunkSize)
	}
	return bufs, func() {}
}

// uintptrOf is the address of b's first octet.
func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
