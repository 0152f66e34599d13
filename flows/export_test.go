package flows

// NewDecoderNoConnCache returns a Decoder that looks every connection up
// in its map, bypassing the 4-tuple cache: the reference the cache is
// tested against.
func NewDecoderNoConnCache(opts Options, emit func(*Record)) *Decoder {
	d := NewDecoder(opts, emit)
	d.noConnCache = true
	return d
}
