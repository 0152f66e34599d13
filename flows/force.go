package flows

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
)

// Force overrides what the decoder would otherwise learn from the MPA
// handshake or guess from the data, for connections that match it: a TCP port
// on either side, optionally restricted to one address. It is what
// iwarpdump's --decode-as builds, for captures no heuristic can settle.
type Force struct {
	Port uint16     // TCP port on either side (0 matches any port)
	Addr netip.Addr // when valid, one side must have this address
	// Markers says which directions carry MPA markers: To is the direction
	// towards Port (client to server), From the one away from it.
	MarkersSet       bool
	MarkersTo        bool
	MarkersFrom      bool
	CRCSet, CRC      bool
	NeverGiveUp      bool // keep looking for FPDUs however long the scan (forces iWARP)
	OriginAtISN      bool // RDMAC: anchor the marker grid at ISN+1 (stream offset 0)
	OriginAtISNGiven bool
}

// matches reports whether the force applies to a connection between a and b,
// and whether a is the side that owns Port.
func (f Force) matches(a, b netip.AddrPort) (ok, aIsServer bool) {
	if f.Addr.IsValid() && a.Addr() != f.Addr && b.Addr() != f.Addr {
		return false, false
	}
	switch {
	case f.Port == 0:
		return true, false
	case a.Port() == f.Port:
		return true, true
	case b.Port() == f.Port:
		return true, false
	}
	return false, false
}

// ParseForce parses a --decode-as specification:
//
//	tcp.port==7174[,markers=to|from|both|none][,crc=on|off][,host=ADDR][,origin=isn]
//
// The first element selects connections (tcp.port==N, or "any"); the rest
// override the MPA settings. "to" is the direction towards the port.
func ParseForce(spec string) (Force, error) {
	var f Force
	f.NeverGiveUp = true
	parts := strings.Split(spec, ",")
	sel := strings.TrimSpace(parts[0])
	switch {
	case sel == "any":
	case strings.HasPrefix(sel, "tcp.port=="):
		n, err := strconv.ParseUint(strings.TrimPrefix(sel, "tcp.port=="), 10, 16)
		if err != nil || n == 0 {
			return f, errors.New("decode-as: bad port in " + strconv.Quote(sel))
		}
		f.Port = uint16(n)
	default:
		return f, errors.New("decode-as: want tcp.port==N or any, got " + strconv.Quote(sel))
	}
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok {
			return f, errors.New("decode-as: want key=value, got " + strconv.Quote(p))
		}
		switch k {
		case "markers":
			f.MarkersSet = true
			switch v {
			case "to":
				f.MarkersTo = true
			case "from":
				f.MarkersFrom = true
			case "both":
				f.MarkersTo, f.MarkersFrom = true, true
			case "none":
			default:
				return f, errors.New("decode-as: markers=to|from|both|none, got " + strconv.Quote(v))
			}
		case "crc":
			f.CRCSet = true
			switch v {
			case "on":
				f.CRC = true
			case "off":
			default:
				return f, errors.New("decode-as: crc=on|off, got " + strconv.Quote(v))
			}
		case "host":
			a, err := netip.ParseAddr(v)
			if err != nil {
				return f, errors.New("decode-as: bad host " + strconv.Quote(v))
			}
			f.Addr = a
		case "origin":
			if v != "isn" && v != "fpdu" {
				return f, errors.New("decode-as: origin=isn|fpdu, got " + strconv.Quote(v))
			}
			f.OriginAtISNGiven = true
			f.OriginAtISN = v == "isn"
		default:
			return f, errors.New("decode-as: unknown key " + strconv.Quote(k))
		}
	}
	return f, nil
}

// applyForce installs the first matching override on a new connection.
func (c *conn) applyForce() {
	for _, f := range c.d.opts.Force {
		ok, aIsServer := f.matches(c.a, c.b)
		if !ok {
			continue
		}
		c.force = &f
		for s, d := range c.dirs {
			// dirs[0] is a->b: towards the server when b owns the port.
			towards := (s == 0) != aIsServer
			if f.Port == 0 {
				towards = s == 0
			}
			if f.MarkersSet {
				d.markersKnown = true
				d.markersNeg = (towards && f.MarkersTo) || (!towards && f.MarkersFrom)
				d.markersForced = true
			}
			if f.CRCSet {
				d.crcKnown, d.crc, d.crcForced = true, f.CRC, true
			}
			if f.OriginAtISNGiven && f.OriginAtISN {
				d.origin, d.originKnown = 0, true
			}
		}
		return
	}
}
