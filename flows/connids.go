package flows

import (
	"math"
	"sync/atomic"
)

// connIDs is the merge's numbering of one worker's connections
// (Parallel.merge): the id a single Decoder gives the worker's connection
// local. A worker numbers its connections 0, 1, 2, ... (Decoder.newID),
// so the table is a window over them, an entry of 4 octets each: the ids
// forgotten at its start (their connection ended, recConnEnd) are
// dropped, and it holds the connections from the oldest one still
// numbered on. A map had taken some 40 octets an entry, and the
// connections that retire (settle.go) keep theirs to the end of the
// capture, for their conn records: 3.3 MB for 100,000 resets.
type connIDs struct {
	base int      // the local id of ids[0]
	ids  []uint32 // the number plus one; 0: forgotten, or in big
	big  map[int]int
}

// maxIDGap is the most entries set leaves unnumbered before local.
const maxIDGap = 1 << 16

// set numbers local, the worker's next connection (or a later one: the
// ones skipped stay unnumbered), as global.
func (m *connIDs) set(local, global int) {
	if len(m.ids) == 0 {
		m.base = local
	}
	i := local - m.base
	if i < len(m.ids) {
		// Not reached: a worker's ids only grow. Kept correct anyway.
		if i < 0 {
			m.setBig(local, global)
			return
		}
	} else {
		if i-len(m.ids) > maxIDGap {
			// Not reached either: a gap would be connections numbered
			// by no recNewID.
			m.setBig(local, global)
			return
		}
		for len(m.ids) <= i {
			m.ids = append(m.ids, 0)
		}
	}
	if global < 0 || global >= math.MaxUint32 {
		m.ids[i] = 0
		m.setBig(local, global)
		return
	}
	m.ids[i] = uint32(global) + 1
}

// setBig keeps what the window cannot.
func (m *connIDs) setBig(local, global int) {
	if m.big == nil {
		m.big = make(map[int]int)
	}
	m.big[local] = global
}

// get returns the number of local.
func (m *connIDs) get(local int) (int, bool) {
	if i := uint(local - m.base); i < uint(len(m.ids)) {
		if v := m.ids[i]; v != 0 {
			return int(v - 1), true
		}
	}
	if m.big != nil {
		g, ok := m.big[local]
		return g, ok
	}
	return 0, false
}

// forget drops the number of local, and the window's start up to the
// first connection still numbered.
func (m *connIDs) forget(local int) {
	if i := uint(local - m.base); i < uint(len(m.ids)) {
		m.ids[i] = 0
	}
	if m.big != nil {
		delete(m.big, local)
	}
	k := 0
	for k < len(m.ids) && m.ids[k] == 0 {
		k++
	}
	if k == len(m.ids) {
		m.ids, m.base = m.ids[:0], 0
		return
	}
	if k > 0 {
		m.ids = m.ids[k:]
		m.base += k
	}
}

// knownIDs is what the merge has published of its numbering of one
// worker's connections (SetKeep), for the worker to read while it runs
// ahead: the global id and TCP stream number of a local id, in a slot of
// knownSlots chosen by the local id, which a later connection's takes
// over. A slot packs the local id's bits above the slot's (16 of them),
// the global id plus one and the stream number (24 bits each); the
// numbering of connections past those widths is not published.
type knownIDs [knownSlots]atomic.Uint64

const (
	knownBits  = 12
	knownSlots = 1 << knownBits
)

// publish records that local is numbered global, with TCP stream number
// stream (0: none, as Record.stream).
func (k *knownIDs) publish(local, global int, stream int32) {
	hi := local >> knownBits
	if local < 0 || hi >= 1<<16 || global < 0 || global+1 >= 1<<24 || stream < 0 || stream >= 1<<24 {
		return
	}
	k[local&(knownSlots-1)].Store(uint64(hi)<<48 | uint64(global+1)<<24 | uint64(stream))
}

// get returns local's global id and stream number, once published.
func (k *knownIDs) get(local int) (global int, stream int32, ok bool) {
	if local < 0 || local>>knownBits >= 1<<16 {
		return 0, 0, false
	}
	v := k[local&(knownSlots-1)].Load()
	g := int(v >> 24 & (1<<24 - 1))
	if g == 0 || int(v>>48) != local>>knownBits {
		return 0, 0, false
	}
	return g - 1, int32(v & (1<<24 - 1)), true
}
