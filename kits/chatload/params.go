package main

import (
	"time"

	"msgbench/kits/go/protocol"
)

// Params are the chat parameters (spec/workloads/chat.json) the request carries.
type Params struct {
	Groups          int64   `json:"groups"`
	ClientsPerGroup int64   `json:"clients_per_group"`
	DurationS       float64 `json:"duration_s"`
	ThinkMS         int64   `json:"think_ms"`
	ListenerDelayMS int64   `json:"listener_delay_ms"`
	Message         string  `json:"message"`
	History         int64   `json:"history"`
	DrainTimeoutS   float64 `json:"drain_timeout_s"`
	Server          string  `json:"server"`
}

// Users is G x CPG.
func (p Params) Users() int64 { return p.Groups * p.ClientsPerGroup }

func (p Params) duration() time.Duration     { return seconds(p.DurationS) }
func (p Params) drainTimeout() time.Duration { return seconds(p.DrainTimeoutS) }
func (p Params) think() time.Duration        { return time.Duration(p.ThinkMS) * time.Millisecond }
func (p Params) listenerDelay() time.Duration {
	return time.Duration(p.ListenerDelayMS) * time.Millisecond
}

func seconds(s float64) time.Duration { return time.Duration(s*float64(time.Second) + 0.5) }

func parse(req protocol.Request) (Params, error) {
	var p Params
	if err := req.DecodeParams(&p); err != nil {
		return p, err
	}
	if p.Server != "ws" {
		return p, protocol.Errorf(protocol.Unsupported,
			"the chat load generator drives a chat server (server=ws), not server=%q", p.Server)
	}
	if p.Message != "text" && p.Message != "binary" {
		return p, protocol.Errorf(protocol.Internal, "message=%q: the load generator sends text or binary", p.Message)
	}
	return p, nil
}
