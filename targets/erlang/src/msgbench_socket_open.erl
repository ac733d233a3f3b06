%% The socket workload's open loop (echo at rate > 0), one connection: a
%% writer process sends message i at its intended time, start + i * interval
%% (interval = sockets / rate), never waiting for echoes, and the
%% connection's owner reads the echoes in order, checks each as the closed
%% loop does and records its latency from that intended time. A writer or a
%% server that falls behind is charged for the wait it caused (coordinated
%% omission corrected); the reader knows message i's intended time from its
%% index, so the framing is the closed loop's.
-module(msgbench_socket_open).

-export([sequence/4, intended/3, wait_until/1]).

%% BEAM timers count whole ms, and `receive after N` returns after about
%% N + 1 ms (measured on the 2-core host: `after 1` took 2.0 ms at the
%% median), so the writer sleeps until SPIN_NS before the intended time and
%% spins the rest, yielding its scheduler to other processes at each turn.
%% Below 2 ms between messages (above 500 round trips/s per socket) the
%% writer therefore spins all the time: a scheduler thread stays busy.
-define(SPIN_NS, 2000000).

%% How long the reader waits, after the last echo, for the writer's count.
-define(WRITER_MS, 60000).

%% Message I's intended send time (ns) when the first is due at Start.
-spec intended(integer(), float(), non_neg_integer()) -> integer().
intended(Start, IntervalNs, I) ->
    Start + round(I * IntervalNs).

%% Returns once msgbench_measure:now() >= Due: a sleep in whole ms to
%% SPIN_NS before it, then a spin that yields at every turn.
-spec wait_until(integer()) -> ok.
wait_until(Due) ->
    case Due - msgbench_measure:now() of
        Rest when Rest >= ?SPIN_NS + 1000000 ->
            receive after (Rest - ?SPIN_NS) div 1000000 -> ok end,
            wait_until(Due);
        Rest when Rest > 0 ->
            erlang:yield(),
            wait_until(Due);
        _ ->
            ok
    end.

%% One socket's open-loop sequence, run by the socket's owner (the reader);
%% its latencies go into Merged. Counts as the closed loop's, with
%% latency_max (ns).
-spec sequence(gen_tcp:socket(), msgbench_socket:run(), tuple(), msgbench_histogram:merged()) ->
          {ok, map()} | {failed, {string(), term()}, non_neg_integer()}.
sequence(Socket, #{messages := Messages, sockets := Sockets, rate := Rate,
                   check_content := Check, active := Active}, Frames, Merged) ->
    IntervalNs = Sockets * 1.0e9 / Rate,
    FrameBytes = msgbench_socket:payload_bytes(element(1, Frames)),
    Owner = self(),
    Start = msgbench_measure:now(),
    Writer = spawn_link(fun() -> write(Owner, Socket, Frames, FrameBytes, Start, IntervalNs, Messages) end),
    Reader = #{socket => Socket, active => Active, frames => Frames, k => tuple_size(Frames),
               check => Check, frame_bytes => FrameBytes, start => Start, interval => IntervalNs,
               messages => Messages},
    case read(Reader, 0, 0, 0, 0) of
        {ok, Received, ReceivedBytes, Mismatches, Max} ->
            Ended = msgbench_measure:now(),
            ok = msgbench_histogram:merge(Merged),
            receive
                {written, Writer, Sent, SentBytes} ->
                    {ok, #{elapsed => Ended - Start, ended => Ended,
                           sent => Sent, sent_bytes => SentBytes,
                           received => Received, received_bytes => ReceivedBytes,
                           mismatches => Mismatches, latency_max => Max}}
            after ?WRITER_MS ->
                stop(Writer),
                {failed, {"waiting for the writer", timeout}, Received}
            end;
        {failed, {_Step, Reason}, Received} ->
            %% A writer that failed shut the socket down to end this wait:
            %% its reason is the story.
            Failed = receive
                         {write_failed, Writer, WriteReason} -> {"sending", WriteReason}
                     after 0 -> {"reading an echo", Reason}
                     end,
            stop(Writer),
            {failed, Failed, Received}
    end.

stop(Writer) ->
    unlink(Writer),
    exit(Writer, kill).

%% Sends every message at its intended time, or at once when late (none is
%% skipped), then tells the owner how many it sent.
write(Owner, Socket, Frames, FrameBytes, Start, IntervalNs, Messages) ->
    write(Owner, Socket, Frames, tuple_size(Frames), FrameBytes, Start, IntervalNs, Messages, 0).

write(Owner, _Socket, _Frames, _K, FrameBytes, _Start, _IntervalNs, Messages, Messages) ->
    Owner ! {written, self(), Messages, Messages * FrameBytes};
write(Owner, Socket, Frames, K, FrameBytes, Start, IntervalNs, Messages, Sent) ->
    ok = wait_until(intended(Start, IntervalNs, Sent)),
    case gen_tcp:send(Socket, element(Sent rem K + 1, Frames)) of
        ok ->
            write(Owner, Socket, Frames, K, FrameBytes, Start, IntervalNs, Messages, Sent + 1);
        {error, Reason} ->
            Owner ! {write_failed, self(), Reason},
            %% Ends the owner's read, passive or active.
            _ = gen_tcp:shutdown(Socket, read_write),
            ok
    end.

%% Echo i, in order: its latency from its intended time recorded in this
%% process's histogram, its content checked against message i.
read(#{messages := Messages}, Messages, Bytes, Mismatches, Max) ->
    {ok, Messages, Bytes, Mismatches, Max};
read(#{socket := Socket, active := Active, frames := Frames, k := K, check := Check,
       frame_bytes := FrameBytes, start := Start, interval := IntervalNs} = Reader, Received, Bytes, Mismatches, Max) ->
    case msgbench_socket:recv(Socket, Active) of
        {ok, Echo} ->
            Latency = msgbench_measure:now() - intended(Start, IntervalNs, Received),
            ok = msgbench_histogram:record(Latency),
            Value = Received rem K,
            {Mismatch, EchoBytes} =
                msgbench_socket:count_echo(Check, Echo, element(Value + 1, Frames), Value, FrameBytes),
            read(Reader, Received + 1, Bytes + EchoBytes, Mismatches + Mismatch, max(Max, Latency));
        {error, Reason} ->
            {failed, {"reading an echo", Reason}, Received}
    end.
