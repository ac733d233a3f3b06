package main

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestTextPayloadIsTheDocumentedJSONAndDecodes(t *testing.T) {
	s := stamp{Group: 12, User: 345, T: 1_000_000_007}
	b := encodeText(s)
	var v struct {
		G, U, T int64
		M       string
	}
	if err := json.Unmarshal(b, &v); err != nil || !utf8.Valid(b) {
		t.Fatalf("%s is not JSON: %v", b, err)
	}
	if v.G != 12 || v.U != 345 || v.T != 1_000_000_007 || v.M != Sentence {
		t.Fatalf("decoded %+v from %s", v, b)
	}
	got, err := decodeText(b)
	if err != nil || got != s {
		t.Fatalf("decodeText(%s) = %+v, %v", b, got, err)
	}
}

func TestTextDecodingTakesAnyLayoutOfTheFields(t *testing.T) {
	got, err := decodeText([]byte(`{"m": "x", "t": 5, "u": 2, "g": 1}`))
	if err != nil || got != (stamp{Group: 1, User: 2, T: 5}) {
		t.Fatalf("got %+v, %v", got, err)
	}
	for _, bad := range []string{`{"g":1,"u":2}`, `hello`, `{"g":"1","u":2,"t":3}`, ``} {
		if _, err := decodeText([]byte(bad)); err == nil {
			t.Fatalf("%q decoded", bad)
		}
	}
}

func TestBinaryPayloadIsBigEndianGroupUserTimeThenTheSentence(t *testing.T) {
	s := stamp{Group: 1, User: 258, T: 1 << 40}
	b := encodeBinary(s)
	want := []byte{0, 0, 0, 1, 0, 0, 1, 2, 0, 0, 1, 0, 0, 0, 0, 0}
	if string(b[:16]) != string(want) || string(b[16:]) != Sentence {
		t.Fatalf("binary payload % x", b)
	}
	if got, err := decodeBinary(b); err != nil || got != s {
		t.Fatalf("decodeBinary = %+v, %v", got, err)
	}
	if _, err := decodeBinary(b[:15]); err == nil {
		t.Fatal("a short payload decoded")
	}
}
