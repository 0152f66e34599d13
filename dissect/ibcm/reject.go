package ibcm

// RejectReason is the reason code of a REJ (IBA §12.6.7.2 Table 109; the
// numbering Linux include/rdma/ib_cm.h enum ib_cm_rej_reason follows).
type RejectReason uint16

// Reject reasons (IBA §12.6.7.2 Table 109).
const (
	RejNoQP                   RejectReason = 1
	RejNoEEC                  RejectReason = 2
	RejNoResources            RejectReason = 3
	RejTimeout                RejectReason = 4
	RejUnsupported            RejectReason = 5
	RejInvalidCommID          RejectReason = 6
	RejInvalidCommInstance    RejectReason = 7
	RejInvalidServiceID       RejectReason = 8
	RejInvalidTransportType   RejectReason = 9
	RejStaleConn              RejectReason = 10
	RejRDCNotExist            RejectReason = 11
	RejInvalidGID             RejectReason = 12
	RejInvalidLID             RejectReason = 13
	RejInvalidSL              RejectReason = 14
	RejInvalidTrafficClass    RejectReason = 15
	RejInvalidHopLimit        RejectReason = 16
	RejInvalidPacketRate      RejectReason = 17
	RejInvalidAltGID          RejectReason = 18
	RejInvalidAltLID          RejectReason = 19
	RejInvalidAltSL           RejectReason = 20
	RejInvalidAltTrafficClass RejectReason = 21
	RejInvalidAltHopLimit     RejectReason = 22
	RejInvalidAltPacketRate   RejectReason = 23
	RejPortCMRedirect         RejectReason = 24
	RejPortRedirect           RejectReason = 25
	RejInvalidMTU             RejectReason = 26
	RejInsufficientRespRes    RejectReason = 27
	RejConsumerDefined        RejectReason = 28
	RejInvalidRNRRetry        RejectReason = 29
	RejDuplicateLocalCommID   RejectReason = 30
	RejInvalidClassVersion    RejectReason = 31
	RejInvalidFlowLabel       RejectReason = 32
	RejInvalidAltFlowLabel    RejectReason = 33
	RejVendorOptionUnsupp     RejectReason = 35
)

var rejNames = [...]string{
	RejNoQP:                   "no_qp",
	RejNoEEC:                  "no_eec",
	RejNoResources:            "no_resources",
	RejTimeout:                "timeout",
	RejUnsupported:            "unsupported",
	RejInvalidCommID:          "invalid_comm_id",
	RejInvalidCommInstance:    "invalid_comm_instance",
	RejInvalidServiceID:       "invalid_service_id",
	RejInvalidTransportType:   "invalid_transport_type",
	RejStaleConn:              "stale_conn",
	RejRDCNotExist:            "rdc_not_exist",
	RejInvalidGID:             "invalid_gid",
	RejInvalidLID:             "invalid_lid",
	RejInvalidSL:              "invalid_sl",
	RejInvalidTrafficClass:    "invalid_traffic_class",
	RejInvalidHopLimit:        "invalid_hop_limit",
	RejInvalidPacketRate:      "invalid_packet_rate",
	RejInvalidAltGID:          "invalid_alt_gid",
	RejInvalidAltLID:          "invalid_alt_lid",
	RejInvalidAltSL:           "invalid_alt_sl",
	RejInvalidAltTrafficClass: "invalid_alt_traffic_class",
	RejInvalidAltHopLimit:     "invalid_alt_hop_limit",
	RejInvalidAltPacketRate:   "invalid_alt_packet_rate",
	RejPortCMRedirect:         "port_cm_redirect",
	RejPortRedirect:           "port_redirect",
	RejInvalidMTU:             "invalid_mtu",
	RejInsufficientRespRes:    "insufficient_resp_resources",
	RejConsumerDefined:        "consumer_defined",
	RejInvalidRNRRetry:        "invalid_rnr_retry",
	RejDuplicateLocalCommID:   "duplicate_local_comm_id",
	RejInvalidClassVersion:    "invalid_class_version",
	RejInvalidFlowLabel:       "invalid_flow_label",
	RejInvalidAltFlowLabel:    "invalid_alt_flow_label",
	RejVendorOptionUnsupp:     "vendor_option_not_supported",
}

// String returns the reason's name in lowercase with underscores
// ("consumer_defined", "invalid_service_id", ...) or "reason(N)" for a
// code the table does not define.
func (r RejectReason) String() string {
	if int(r) < len(rejNames) && rejNames[r] != "" {
		return rejNames[r]
	}
	return "reason(" + itoa(int(r)) + ")"
}

// Defined reports whether r is a reason code of Table 109.
func (r RejectReason) Defined() bool { return int(r) < len(rejNames) && rejNames[r] != "" }
