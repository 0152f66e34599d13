package flows

import "math"

// newDecoderWith returns a Decoder that set has made a test reference of.
func newDecoderWith(opts Options, emit func(*Record), set func(*Decoder)) *Decoder {
	d := NewDecoder(opts, emit)
	set(d)
	return d
}

// SetSpillBudget sets the memory every Decoder's packed conn records of
// retired connections take before they go to a temporary file (0: the
// default), and returns what restores the default.
func SetSpillBudget(n int) (restore func()) {
	testSpillBudget = n
	return func() { testSpillBudget = 0 }
}

// NewDecoderNoConnCache returns a Decoder that looks every connection up
// in its map, bypassing the 4-tuple cache: the reference the cache is
// tested against.
func NewDecoderNoConnCache(opts Options, emit func(*Record)) *Decoder {
	return newDecoderWith(opts, emit, func(d *Decoder) { d.noConnCache = true })
}

// NewDecoderFullStrip returns a Decoder that strips the markers of every
// FPDU whole, the reference for the partial strip.
func NewDecoderFullStrip(opts Options, emit func(*Record)) *Decoder {
	return newDecoderWith(opts, emit, func(d *Decoder) { d.fullStrip = true })
}

// NewDecoderNoSpare returns a Decoder that makes every connection new,
// never from the storage of one finished when it closed: the reference
// the reuse is tested against.
func NewDecoderNoSpare(opts Options, emit func(*Record)) *Decoder {
	return newDecoderWith(opts, emit, func(d *Decoder) { d.noSpare = true })
}

// NewDecoderNoSettle returns a Decoder that keeps the rings of sent
// segments of reset connections to the end of the capture and matches
// every Terminate against them: the reference settling is tested against.
func NewDecoderNoSettle(opts Options, emit func(*Record)) *Decoder {
	return newDecoderWith(opts, emit, func(d *Decoder) { d.noSettle = true })
}

// NewDecoderScanIdle returns a Decoder that finds the connection to evict
// from a full table by looking at every one: the reference the idle heap
// is tested against.
func NewDecoderScanIdle(opts Options, emit func(*Record)) *Decoder {
	return newDecoderWith(opts, emit, func(d *Decoder) { d.scanIdle = true })
}

// IdleEntries is the number of entries in the idle heap.
func (d *Decoder) IdleEntries() int { return len(d.idle) }

// Conns is the number of connections in the table.
func (d *Decoder) Conns() int { return len(d.conns) }

// PendingLimits returns the pending limit of the TCP connections as the
// heap gives it and as a look at every direction of every connection in
// the table gives it (math.MaxUint64 when none holds any), and whether
// each direction in the heap sits at its place with its pending frame.
func (d *Decoder) PendingLimits() (heap, scan uint64, consistent bool) {
	heap, scan, consistent = math.MaxUint64, math.MaxUint64, true
	if len(d.pending) > 0 {
		heap = d.pending[0].pendKey
	}
	for _, c := range d.conns {
		for _, dir := range c.dirs {
			if f, ok := dir.pendingFrame(); ok {
				scan = min(scan, f)
				if !dir.inPending || dir.pendKey != f {
					consistent = false
				}
			}
		}
	}
	for i, dir := range d.pending {
		if dir.pendIdx != i || !dir.inPending || (i > 0 && d.pending[(i-1)/2].pendKey > dir.pendKey) {
			consistent = false
		}
	}
	return heap, scan, consistent
}

// NewDecoderNoEmbryo returns a Decoder that makes every connection at its
// SYN: the reference embryos are tested against.
func NewDecoderNoEmbryo(opts Options, emit func(*Record)) *Decoder {
	return newDecoderWith(opts, emit, func(d *Decoder) { d.noEmbryo = true })
}

// SetSegRecords sets how many queued records make a Parallel worker hand
// them to the merge before the end of its round (for Parallels made
// afterwards), and returns the value it had.
func SetSegRecords(n int) int {
	old := segRecords
	segRecords = n
	return old
}

// SegRecords is segRecords.
func SegRecords() int { return segRecords }

// MaxPart is the most records a worker of p handed the merge at once; call
// it after Close.
func (p *Parallel) MaxPart() int {
	m := 0
	for _, w := range p.workers {
		m = max(m, w.maxPart)
	}
	return m
}

// SetHeldPackAt sets how many records waiting make the ordering queues
// made afterwards pack the FPDU records pushed into them, and returns the
// value it had.
func SetHeldPackAt(n int) int {
	old := heldPackAt
	heldPackAt = n
	return old
}

// HeldPacked counts the records the ordering queues have packed.
func HeldPacked() uint64 { return heldPacked.Load() }

// MaxLites returns the most records the merge held at once as octets
// their workers rendered (SetFormat). Call it after Close.
func (p *Parallel) MaxLites() int { return p.maxLites }

// BoxesMade is how many FPDU boxes the workers' Decoders have allocated.
func (p *Parallel) BoxesMade() int {
	n := 0
	for _, w := range p.workers {
		n += w.dec.made
	}
	return n
}

// MaxFreeBoxes is how many FPDU boxes a Decoder keeps for reuse.
const MaxFreeBoxes = maxFreeBoxes
