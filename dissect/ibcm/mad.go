package ibcm

import (
	"encoding/binary"

	"github.com/iwarpkit/iwarpkit/dissect"
)

// MAD common header values for Communication Management (IBA §13.4.3,
// §12.6: management class 0x07, class version 2).
const (
	MADHeaderLen     = 24
	MADDataLen       = MADLen - MADHeaderLen // 232 octets of CM message
	BaseVersion      = 0x01
	MgmtClassCM      = 0x07
	CMClassVersion   = 0x02
	MethodGet        = 0x01
	MethodSet        = 0x02
	MethodSend       = 0x03
	MethodGetResp    = 0x81
	methodRespBit    = 0x80
	methodValueMask  = 0x7F
	madMethodOffset  = 3
	madAttrIDOffset  = 16
	madAttrModOffset = 20
)

// MAD is the common MAD header (IBA §13.4.3 Figure 145):
//
//	octet 0: BaseVersion, 1: MgmtClass, 2: ClassVersion, 3: R (0x80) | Method
//	octets 4-5: Status, 6-7: ClassSpecific, 8-15: TransactionID
//	octets 16-17: AttributeID, 18-19: Reserved, 20-23: AttributeModifier
type MAD struct {
	BaseVersion   uint8
	MgmtClass     uint8
	ClassVersion  uint8
	R             bool  // response bit
	Method        uint8 // the low seven bits
	Status        uint16
	ClassSpecific uint16
	TransactionID uint64
	AttributeID   uint16
	Resv16        uint16
	AttributeMod  uint32
}

// DecodeMAD reads the common MAD header from the start of b.
func DecodeMAD(b []byte) (MAD, error) {
	if len(b) < MADHeaderLen {
		return MAD{}, dissect.ErrTruncated
	}
	return MAD{
		BaseVersion:   b[0],
		MgmtClass:     b[1],
		ClassVersion:  b[2],
		R:             b[madMethodOffset]&methodRespBit != 0,
		Method:        b[madMethodOffset] & methodValueMask,
		Status:        binary.BigEndian.Uint16(b[4:6]),
		ClassSpecific: binary.BigEndian.Uint16(b[6:8]),
		TransactionID: binary.BigEndian.Uint64(b[8:16]),
		AttributeID:   binary.BigEndian.Uint16(b[madAttrIDOffset:]),
		Resv16:        binary.BigEndian.Uint16(b[18:20]),
		AttributeMod:  binary.BigEndian.Uint32(b[madAttrModOffset:]),
	}, nil
}

// AppendMAD appends the 24-octet wire form of m (IBA §13.4.3).
func AppendMAD(dst []byte, m MAD) []byte {
	meth := m.Method & methodValueMask
	if m.R {
		meth |= methodRespBit
	}
	dst = append(dst, m.BaseVersion, m.MgmtClass, m.ClassVersion, meth)
	dst = binary.BigEndian.AppendUint16(dst, m.Status)
	dst = binary.BigEndian.AppendUint16(dst, m.ClassSpecific)
	dst = binary.BigEndian.AppendUint64(dst, m.TransactionID)
	dst = binary.BigEndian.AppendUint16(dst, m.AttributeID)
	dst = binary.BigEndian.AppendUint16(dst, m.Resv16)
	return binary.BigEndian.AppendUint32(dst, m.AttributeMod)
}

// MethodName returns the MAD method's name (IBA §13.4.5 Table 147) for the
// methods CM uses: "get", "set", "send", "get_resp", or "method(0xNN)".
func (m MAD) MethodName() string {
	v := m.Method
	if m.R {
		v |= methodRespBit
	}
	switch v {
	case MethodGet:
		return "get"
	case MethodSet:
		return "set"
	case MethodSend:
		return "send"
	case MethodGetResp:
		return "get_resp"
	}
	return "method(" + hexByte(v) + ")"
}

const hexDigits = "0123456789abcdef"

func hexByte(v uint8) string { return "0x" + string([]byte{hexDigits[v>>4], hexDigits[v&15]}) }

func hex16(v uint16) string {
	return "0x" + string([]byte{hexDigits[v>>12], hexDigits[v>>8&15], hexDigits[v>>4&15], hexDigits[v&15]})
}
