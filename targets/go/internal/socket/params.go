// Package socket is the socket workload (seed 002, the Erlang inet driver
// speed test): echo latency and flow bandwidth over TCP between this worker
// (the client) and its server half, a separate process (spec/README.md,
// "Peers"). Every socket has its own client goroutine and its own server
// goroutine; in open loop (echo at a rate) the client's is two, a paced
// writer and a reader that times each echo from its intended send time.
package socket

import (
	"msgbench/kits/go/protocol"
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

// Params are the parameters, as the harness checked them.
type Params struct {
	Flow         bool  // mode = flow; else echo
	Size         int64 // payload bytes per message, framing excluded
	TotalBytes   int64 // payload bytes per socket over the sequence
	Sockets      int
	Remote       bool // placement = remote: the harness placed the server elsewhere
	CheckContent bool // echo: compare every echoed payload in full
	Port         int  // the server's port, 0 = any free one
	// Rate > 0 (echo): round trips per second offered by all sockets
	// together, open loop; 0: closed loop, the next message when the last
	// has returned.
	Rate float64
}

// wireParams are the parameters as the request carries them (spec/workloads/socket.json).
type wireParams struct {
	Mode         string  `json:"mode"`
	Size         int64   `json:"size"`
	TotalBytes   int64   `json:"total_bytes"`
	Sockets      int     `json:"sockets"`
	Data         string  `json:"data"`
	Placement    string  `json:"placement"`
	CheckContent int     `json:"check_content"`
	Port         int     `json:"port"`
	Rate         float64 `json:"rate"` // absent at its default, 0 (omit_at_default)
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

// Parse is the request's parameters and the variant's options. data =
// "list" is unsupported: Go's sockets take byte slices only.
func Parse(req protocol.Request) (Params, Options, error) {
	var w wireParams
	if err := req.DecodeParams(&w); err != nil {
		return Params{}, Options{}, err
	}
	buffered, err := req.Options.Bool("buffered_flow")
	if err != nil {
		return Params{}, Options{}, err
	}
	if err := req.Options.Unknown("buffered_flow"); err != nil {
		return Params{}, Options{}, err
	}
	if w.Data == DataList {
		return Params{}, Options{}, protocol.Errorf(protocol.Unsupported,
			`data = "list" is an Erlang notion (lists of bytes on a socket); go sends byte slices only: use data = "binary"`)
	}
	p := Params{Flow: w.Mode == ModeFlow, Size: w.Size, TotalBytes: w.TotalBytes, Sockets: w.Sockets,
		Remote: w.Placement == PlacementRemote, CheckContent: w.CheckContent == 1, Port: w.Port,
		Rate: w.Rate}
	return p, Options{BufferedFlow: buffered}, nil
}
