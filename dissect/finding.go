package dissect

// Severity ranks a finding, as Wireshark's expert info does.
type Severity uint8

// Severities, least severe first so that comparisons read naturally
// (s >= SeverityWarning).
const (
	SeverityNote Severity = iota + 1
	SeverityWarning
	SeverityError
)

// String returns "note", "warning" or "error".
func (s Severity) String() string {
	switch s {
	case SeverityNote:
		return "note"
	case SeverityWarning:
		return "warning"
	case SeverityError:
		return "error"
	}
	return "unknown"
}

// ParseSeverity is the inverse of String.
func ParseSeverity(s string) (Severity, bool) {
	switch s {
	case "note":
		return SeverityNote, true
	case "warning":
		return SeverityWarning, true
	case "error":
		return SeverityError, true
	}
	return 0, false
}

// Finding is a protocol observation worth a person's attention: a bad CRC, a
// marker that points nowhere, a Terminate, a rule of the interoperability
// matrix broken. Findings are data, not Go errors. Code is stable and dotted
// (mpa.crc_bad); Ref cites the RFC section or seed rule the finding rests on.
type Finding struct {
	Severity Severity
	Code     string
	Msg      string
	Frames   []uint64
	Ref      string
}
