package format

import "github.com/iwarpkit/iwarpkit/flows"

// extFields appends the values of records of the non-TCP transports.
func extFields(out []KV, r *flows.Record) []KV { return out }

// appendExtLine appends the one-line text of a non-TCP record.
func appendExtLine(dst []byte, r *flows.Record) []byte { return dst }
