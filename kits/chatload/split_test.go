package main

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"msgbench/kits/go/protocol"
)

func TestSplitFromEnvTakesWholeGroupsWithinTheRun(t *testing.T) {
	p := Params{Groups: 4, ClientsPerGroup: 3}
	t.Setenv(envServerURL, "")
	if sp, err := splitFromEnv(p, nil); sp != nil || err != nil {
		t.Fatalf("a local run: want no split, got %v, %v", sp, err)
	}
	t.Setenv(envServerURL, "ws://10.0.0.1:4000/")
	t.Setenv(envGroups, "2:2")
	t.Setenv(envLead, "1")
	sp, err := splitFromEnv(p, nil)
	if err != nil || !sp.lead || sp.firstGroup != 2 || sp.groups != 2 || sp.firstUser(3) != 6 {
		t.Fatalf("want groups 2..3 from user 6, lead: got %+v, %v", sp, err)
	}
	for _, bad := range []string{"3:2", "x:1", "1", "0:0"} {
		t.Setenv(envGroups, bad)
		if _, err := splitFromEnv(p, nil); err == nil || !strings.Contains(err.Error(), "whole groups") {
			t.Fatalf("%s=%q: want an error naming whole groups, got %v", envGroups, bad, err)
		}
	}
	t.Setenv(envGroups, "")
	t.Setenv(envServerURL, "http://x/")
	if _, err := splitFromEnv(p, nil); err == nil || !strings.Contains(err.Error(), "not ws://HOST:PORT/") {
		t.Fatalf("want the URL refused, got %v", err)
	}
}

func TestBarrierSaysReadyAndWaitsForGo(t *testing.T) {
	var out bytes.Buffer
	sp := &split{in: bufio.NewReader(strings.NewReader("go\nstop\n"))}
	w := protocol.NewWriter(&out)
	if err := sp.barrier(w, "connect"); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out.String()); got != `{"stage":"connect","type":"ready"}` {
		t.Fatalf("ready line: %s", got)
	}
	if err := sp.barrier(w, "send"); err == nil || !strings.Contains(err.Error(), "not go") {
		t.Fatalf("want a line other than go refused, got %v", err)
	}
	if err := sp.barrier(w, "send"); err == nil || !strings.Contains(err.Error(), "closed stdin") {
		t.Fatalf("want stdin's end reported, got %v", err)
	}
}
