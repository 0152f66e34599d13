package varpack

// Arena holds packed records end to end in blocks of ArenaBlock octets,
// each addressed by a uint32 offset (the block's index and the place in
// it). One growing slice doubled its room at a time (a quarter once
// large) and, while append copied it, held the old and the new together:
// 100,000 packed table rows of 60 octets took up to 15 MB at that moment
// for 6 MB of rows. An Arena grows by a block and never copies; it wastes
// at most the end of each block.
type Arena struct {
	blocks [][]byte
	used   int // octets handed out, ends of blocks not included
}

// ArenaBlock is the size of an Arena's blocks. A record longer than that
// gets a block of its own.
const (
	arenaShift = 16
	ArenaBlock = 1 << arenaShift
)

// maxArenaBlocks bounds the blocks an offset can address.
const maxArenaBlocks = 1 << (32 - arenaShift)

// Alloc returns n octets of room (zeroed) and their offset; ok is false
// when the Arena cannot address more.
func (a *Arena) Alloc(n int) (b []byte, at uint32, ok bool) {
	if n < 0 {
		return nil, 0, false
	}
	k := len(a.blocks) - 1
	if k < 0 || cap(a.blocks[k])-len(a.blocks[k]) < n || len(a.blocks[k]) >= ArenaBlock {
		if len(a.blocks) >= maxArenaBlocks {
			return nil, 0, false
		}
		a.blocks = append(a.blocks, make([]byte, 0, max(n, ArenaBlock)))
		k++
	}
	blk := a.blocks[k]
	off := len(blk)
	a.blocks[k] = blk[:off+n]
	a.used += n
	return a.blocks[k][off : off+n : off+n], uint32(k)<<arenaShift | uint32(off), true
}

// Add appends p and room zero octets after it, and returns their offset.
func (a *Arena) Add(p []byte, room int) (at uint32, ok bool) {
	b, at, ok := a.Alloc(len(p) + room)
	if ok {
		copy(b, p)
	}
	return at, ok
}

// Bytes returns the n octets at offset at, or nil if the Arena does not
// hold them.
func (a *Arena) Bytes(at uint32, n int) []byte {
	k, off := int(at>>arenaShift), int(at&(ArenaBlock-1))
	if k >= len(a.blocks) || n < 0 || off+n > len(a.blocks[k]) {
		return nil
	}
	return a.blocks[k][off : off+n : off+n]
}

// Len returns the octets handed out.
func (a *Arena) Len() int { return a.used }
