package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"strconv"
)

// Sentence is the seed's message (with an em dash, U+2014, in UTF-8), as the
// in-process chat workers send it.
const Sentence = "I've been mad for fucking years\u2014absolutely years"

// sentenceJSON is Sentence as a JSON string, encoded once.
var sentenceJSON = func() []byte {
	b, err := json.Marshal(Sentence)
	if err != nil {
		panic(err)
	}
	return b
}()

// stamp is what every payload carries (docs/chat-server.md): the sender's
// group and user, and the intended send time in ns on this process's
// monotonic clock.
type stamp struct {
	Group, User, T int64
}

const binaryHeader = 4 + 4 + 8

// encodeText is {"g":G,"u":U,"t":T,"m":"<sentence>"}.
func encodeText(s stamp) []byte {
	b := make([]byte, 0, 48+len(sentenceJSON))
	b = append(b, `{"g":`...)
	b = strconv.AppendInt(b, s.Group, 10)
	b = append(b, `,"u":`...)
	b = strconv.AppendInt(b, s.User, 10)
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, s.T, 10)
	b = append(b, `,"m":`...)
	b = append(b, sentenceJSON...)
	return append(b, '}')
}

// encodeBinary is 4 bytes G, 4 bytes U, 8 bytes T (big-endian), the sentence.
func encodeBinary(s stamp) []byte {
	b := make([]byte, binaryHeader, binaryHeader+len(Sentence))
	binary.BigEndian.PutUint32(b[0:4], uint32(s.Group))
	binary.BigEndian.PutUint32(b[4:8], uint32(s.User))
	binary.BigEndian.PutUint64(b[8:16], uint64(s.T))
	return append(b, Sentence...)
}

var errMalformed = errors.New("not a chat payload")

func decodeBinary(b []byte) (stamp, error) {
	if len(b) < binaryHeader {
		return stamp{}, errMalformed
	}
	return stamp{
		Group: int64(binary.BigEndian.Uint32(b[0:4])),
		User:  int64(binary.BigEndian.Uint32(b[4:8])),
		T:     int64(binary.BigEndian.Uint64(b[8:16])),
	}, nil
}

// decodeText reads the stamp of a text payload: the fast path for the
// layout encodeText writes, any other JSON object through encoding/json
// (the server must pass the payload verbatim, but the fields decide).
func decodeText(b []byte) (stamp, error) {
	if s, ok := fastText(b); ok {
		return s, nil
	}
	var v struct {
		G *int64 `json:"g"`
		U *int64 `json:"u"`
		T *int64 `json:"t"`
	}
	if err := json.Unmarshal(b, &v); err != nil || v.G == nil || v.U == nil || v.T == nil {
		return stamp{}, errMalformed
	}
	return stamp{Group: *v.G, User: *v.U, T: *v.T}, nil
}

func fastText(b []byte) (stamp, bool) {
	var s stamp
	var ok bool
	if b, ok = field(b, `{"g":`, &s.Group); !ok {
		return s, false
	}
	if b, ok = field(b, `,"u":`, &s.User); !ok {
		return s, false
	}
	if _, ok = field(b, `,"t":`, &s.T); !ok {
		return s, false
	}
	return s, true
}

// field reads prefix then a decimal integer, and returns the rest.
func field(b []byte, prefix string, into *int64) ([]byte, bool) {
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return nil, false
	}
	b = b[len(prefix):]
	end := 0
	for end < len(b) && (b[end] >= '0' && b[end] <= '9' || end == 0 && b[end] == '-') {
		end++
	}
	n, err := strconv.ParseInt(string(b[:end]), 10, 64)
	if err != nil {
		return nil, false
	}
	*into = n
	return b[end:], true
}
