//go:build !amd64 || purego

package crc32c

func update(crc uint32, p []byte) uint32 { return generic(crc, p) }

// accelerated reports whether update folds with vector instructions.
func accelerated() bool { return false }
