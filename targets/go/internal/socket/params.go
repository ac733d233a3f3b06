// Package socket is the socket workload (seed 002, the Erlang inet driver
// speed test): echo latency and flow bandwidth over TCP between this worker
// (the client) and its server half, a separate process (spec/README.md,
// "Peers"). Every socket has its own client goroutine and its own server
// goroutine.
package socket

import (
	"msgbench/targets/go/internal/params"
	"msgbench/targets/go/internal/protocol"
)

// The accepted values, as in spec/workloads/socket.json (a test checks they
// agree).
var (
	Modes             = []string{ModeEcho, ModeFlow}
	SizeRange         = params.IntRange{Min: 1, Max: 67108864}
	TotalBytesRange   = params.IntRange{Min: 1, Max: 17179869184}
	SocketsRange      = params.IntRange{Min: 1, Max: 1024}
	DataTypes         = []string{DataBinary, DataList}
	Placements        = []string{PlacementLocal, PlacementRemote}
	CheckContentRange = params.IntRange{Min: 0, Max: 1}
	PortRange         = params.IntRange{Min: 0, Max: 65535}
)

// The values of the enumerated parameters.
const (
	ModeEcho        = "echo"
	ModeFlow        = "flow"
	DataBinary      = "binary"
	DataList        = "list"
	PlacementLocal  = "local"
	PlacementRemote = "remote"
)

var paramNames = []string{"mode", "size", "total_bytes", "sockets", "data", "placement", "check_content", "port"}

// Params are the validated parameters.
type Params struct {
	Flow         bool  // mode = flow; else echo
	Size         int64 // payload bytes per message, framing excluded
	TotalBytes   int64 // payload bytes per socket over the sequence
	Sockets      int
	Remote       bool // placement = remote: the harness placed the server elsewhere
	CheckContent bool // echo: compare every echoed payload in full
	Port         int  // the server's port, 0 = any free one
}

// Messages is the number of messages per socket: max(1, total_bytes / size).
func (p Params) Messages() int64 { return max(1, p.TotalBytes/p.Size) }

// Mode names the mode as the request does.
func (p Params) Mode() string {
	if p.Flow {
		return ModeFlow
	}
	return ModeEcho
}

// ParseParams validates the request's params. data = "list" is unsupported
// (after every parameter has been validated, so a bad one is still
// bad_params): Go's sockets take byte slices only.
func ParseParams(raw map[string]any) (Params, error) {
	var p Params
	if err := params.RejectUnknown(raw, "", paramNames...); err != nil {
		return p, err
	}
	mode, err := params.Get(raw, "mode", "mode").OneOf(Modes...)
	if err != nil {
		return p, err
	}
	p.Flow = mode == ModeFlow
	if p.Size, err = params.Get(raw, "size", "size").Int(SizeRange); err != nil {
		return p, err
	}
	if p.TotalBytes, err = params.Get(raw, "total_bytes", "total_bytes").Int(TotalBytesRange); err != nil {
		return p, err
	}
	if p.Size > p.TotalBytes {
		return p, protocol.Errorf(protocol.BadParams,
			"size = %d is out of range: size must not exceed total_bytes (%d)", p.Size, p.TotalBytes)
	}
	sockets, err := params.Get(raw, "sockets", "sockets").Int(SocketsRange)
	if err != nil {
		return p, err
	}
	p.Sockets = int(sockets)
	data, err := params.Get(raw, "data", "data").OneOf(DataTypes...)
	if err != nil {
		return p, err
	}
	placement, err := params.Get(raw, "placement", "placement").OneOf(Placements...)
	if err != nil {
		return p, err
	}
	p.Remote = placement == PlacementRemote
	check, err := params.Get(raw, "check_content", "check_content").Int(CheckContentRange)
	if err != nil {
		return p, err
	}
	p.CheckContent = check == 1
	port, err := params.Get(raw, "port", "port").Int(PortRange)
	if err != nil {
		return p, err
	}
	p.Port = int(port)
	if data == DataList {
		return p, protocol.Errorf(protocol.Unsupported,
			`data = "list" is an Erlang notion (lists of bytes on a socket); go sends byte slices only: use data = "binary"`)
	}
	return p, nil
}
