package fanin

import (
	"math/rand/v2"
	"slices"

	"msgbench/kits/go/protocol"
)

// Kind is a signal kind of the mix.
type Kind int

const (
	Message Kind = iota
	ExitSignal
	kindCount
)

// kindNames are the spelling of the kinds in params and in verify names.
var kindNames = [kindCount]string{Message: "message", ExitSignal: "exit_signal"}

func (k Kind) String() string { return kindNames[k] }

// Counts are signals per kind.
type Counts [kindCount]int64

// Add adds other into c.
func (c *Counts) Add(other Counts) {
	for k := range c {
		c[k] += other[k]
	}
}

// Total is the sum over the kinds.
func (c Counts) Total() int64 {
	var sum int64
	for _, n := range c {
		sum += n
	}
	return sum
}

// Share is one entry of the mix: percent of the sends are of kind, each
// carrying size 64-bit words.
type Share struct {
	Percent float64
	Kind    Kind
	Size    int64
}

// Mix is the list of shares; the percents add to 100.
type Mix []Share

// wireShare is one row of the mix as the request carries it.
type wireShare struct {
	Percent float64 `json:"percent"`
	Kind    string  `json:"kind"`
	Size    int64   `json:"size"`
}

// newMix is the request's mix: the harness has checked the kinds, sizes and
// that the percents add to 100.
func newMix(rows []wireShare) (Mix, error) {
	mix := make(Mix, len(rows))
	for i, row := range rows {
		k := slices.Index(kindNames[:], row.Kind)
		if k < 0 {
			return nil, protocol.Errorf(protocol.Internal, "mix[%d].kind = %q is not a kind this worker knows", i, row.Kind)
		}
		mix[i] = Share{Percent: row.Percent, Kind: Kind(k), Size: row.Size}
	}
	return mix, nil
}

// choice is one row of the table a sender draws from: the OTP suite's
// ProbHelpTab, cumulative probabilities, plus the payload every send of the
// row copies.
type choice struct {
	below float64 // drawn numbers < below pick this row (unless an earlier one did)
	kind  Kind
	words []uint64 // the prepared payload: 1..size, as lists:seq(1, Size)
}

type choiceTable []choice

func (m Mix) table() choiceTable {
	t := make(choiceTable, len(m))
	var cumulative float64
	for i, share := range m {
		cumulative += share.Percent / 100
		words := make([]uint64, share.Size)
		for j := range words {
			words[j] = uint64(j + 1)
		}
		t[i] = choice{below: cumulative, kind: share.Kind, words: words}
	}
	return t
}

// pick draws a row as the OTP suite's get_op does: the first row whose
// cumulative probability exceeds the draw, the last row whatever the draw.
func (t choiceTable) pick(rng *rand.Rand) *choice {
	draw := rng.Float64()
	last := len(t) - 1
	for i := 0; i < last; i++ {
		if draw < t[i].below {
			return &t[i]
		}
	}
	return &t[last]
}

// largest is the size of the biggest share.
func (m Mix) largest() int64 {
	var size int64
	for _, share := range m {
		size = max(size, share.Size)
	}
	return size
}

// find returns the index of the first share of kind k.
func (m Mix) find(k Kind) (int, bool) {
	for i, share := range m {
		if share.Kind == k {
			return i, true
		}
	}
	return 0, false
}
