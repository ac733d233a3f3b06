%% The socket workload (seed 002, the inet driver speed test): what both ends
%% share (framing, socket options, reads, the content check) and the client
%% side, one process per socket.
%%
%% Framing: every message is a 4-byte big-endian length and `size` payload
%% bytes, all of one value. That is exactly gen_tcp's {packet, 4}: the
%% driver writes the header on send and cuts whole frames out of the byte
%% stream on receive, so both ends use it and the program handles payloads
%% only (a test checks the bytes on the wire).
-module(msgbench_socket).

-export([socket_options/1, arm/2, recv/2, recv/3, frames/3, frame_count/3, shared_frames/3,
         payload_bytes/1,
         mismatch/5, count_echo/5, run/3, memory_fits/2, watchdog/1, watchdog/3, watch/3]).

-export_type([run/0, data/0, outcome/0]).

-type data() :: binary | list.

%% What both ends need to know of a run.
-type run() :: #{mode := echo | flow,
                 size := pos_integer(),
                 messages := pos_integer(),
                 sockets := pos_integer(),
                 data := data(),
                 check_content := boolean(),
                 active := msgbench_erlang_options:socket_active(),
                 %% echo: round trips/s offered in all sockets together, open
                 %% loop (msgbench_socket_open); 0: closed loop.
                 rate := number()}.

%% What the clients measured and counted (all sockets together, except
%% elapsed, one per socket; times in ns). Open loop: the latencies too.
-type outcome() :: #{elapsed := [integer()],
                     wall := integer(),
                     sent := non_neg_integer(),
                     sent_bytes := non_neg_integer(),
                     received := non_neg_integer(),
                     received_bytes := non_neg_integer(),
                     mismatches := non_neg_integer(),
                     latency => [[non_neg_integer()]],
                     latency_max => integer()}.

-type payload() :: binary() | [byte()].

%% Limits on every wait, so that nothing hangs: a connection that makes no
%% progress for IDLE_MS (see watchdog/1), a connect that takes more than
%% CONNECT_MS.
-define(IDLE_MS, 60000).
-define(WATCH_EVERY_MS, 5000).
-define(CONNECT_MS, 30000).

%% The fill value cycles through at most MAX_VALUES values, and the prepared
%% frames take at most FRAMES_BUDGET bytes of memory unless two alone need
%% more (as the Go target does).
-define(MAX_VALUES, 251).
-define(FRAMES_BUDGET, (64 * 1024 * 1024)).

%% A list of bytes takes a cons cell, two words, per byte.
-define(LIST_BYTES_PER_BYTE, 16).

%% The most the prepared payloads may take of the literal area.
-define(LITERAL_BUDGET, (256 * 1024 * 1024)).

%%--------------------------------------------------------------------
%% Shared by both ends
%%--------------------------------------------------------------------

%% Options of every connection. Reads start passive; an active variant arms
%% its mode once the socket has its final owner (recv/3, set_active/2).
%% TCP_NODELAY: with one message in flight (echo), Nagle's algorithm and
%% the peer's delayed ACK would stall round trips by up to 40 ms; gen_tcp's
%% default is {nodelay, false}. exit_on_close false keeps a socket whose
%% peer has shut down its side open for writing (the flow server's ack).
-spec socket_options(data()) -> [gen_tcp:option()].
socket_options(Data) ->
    [Data, {packet, 4}, {active, false}, {nodelay, true}, {exit_on_close, false}].

%% The next whole frame's payload, by the variant's way of reading, waiting
%% as long as it takes: the watchdog ends a connection that stalls. (A
%% timeout on every read would start and cancel a timer per message: 20-25%
%% of the throughput of 16-byte frames.)
-spec recv(gen_tcp:socket(), msgbench_erlang_options:socket_active()) ->
          {ok, payload()} | {error, term()}.
recv(Socket, Active) ->
    recv(Socket, Active, infinity).

%% The same, for at most Timeout ms.
-spec recv(gen_tcp:socket(), msgbench_erlang_options:socket_active(), timeout()) ->
          {ok, payload()} | {error, term()}.
recv(Socket, false, Timeout) ->
    gen_tcp:recv(Socket, 0, Timeout);
recv(Socket, once, Timeout) ->
    case inet:setopts(Socket, [{active, once}]) of
        ok -> take(Socket, once, Timeout);
        {error, _} = Error -> Error
    end;
recv(Socket, N, Timeout) ->
    take(Socket, N, Timeout).

take(Socket, Active, Timeout) ->
    receive
        {tcp, Socket, Payload} ->
            {ok, Payload};
        {tcp_passive, Socket} ->
            %% {active, N} delivered its N: arm it again.
            case inet:setopts(Socket, [{active, Active}]) of
                ok -> take(Socket, Active, Timeout);
                {error, _} = Error -> Error
            end;
        {tcp_closed, Socket} ->
            {error, closed};
        {tcp_error, Socket, Reason} ->
            {error, Reason}
    after Timeout ->
        {error, timeout}
    end.

%% Bytes in a payload as received: counted, not taken from the params.
-spec payload_bytes(payload()) -> non_neg_integer().
payload_bytes(Payload) when is_binary(Payload) -> byte_size(Payload);
payload_bytes(Payload) when is_list(Payload) -> length(Payload).

%% 1 when the echo differs from the sent payload (all bytes Value, Bytes of
%% them), else 0. check_content: the whole payload compared (memcmp for
%% binaries); otherwise length, first and last byte.
-spec mismatch(boolean(), payload(), non_neg_integer(), payload(), byte()) -> 0 | 1.
mismatch(true, Echo, _EchoBytes, Sent, _Value) ->
    case Echo =:= Sent of
        true -> 0;
        false -> 1
    end;
mismatch(false, Echo, EchoBytes, Sent, Value) ->
    case EchoBytes =:= payload_bytes(Sent) andalso EchoBytes > 0
        andalso first(Echo) =:= Value andalso last(Echo) =:= Value of
        true -> 0;
        false -> 1
    end.

%% An echo of message Value counted, for the open and closed loops alike:
%% {Mismatch, EchoBytes}. An echo equal to Payload is as long (FrameBytes):
%% no walk to count a list.
-spec count_echo(boolean(), payload(), payload(), byte(), non_neg_integer()) ->
          {0 | 1, non_neg_integer()}.
count_echo(true, Echo, Echo, _Value, FrameBytes) ->
    {0, FrameBytes};
count_echo(Check, Echo, Payload, Value, _FrameBytes) ->
    EchoBytes = payload_bytes(Echo),
    {mismatch(Check, Echo, EchoBytes, Payload, Value), EchoBytes}.

first(<<Byte, _/binary>>) -> Byte;
first([Byte | _]) -> Byte.

last(Binary) when is_binary(Binary) -> binary:last(Binary);
last(List) -> lists:last(List).

%% Roughly what one end allocates for a run, in bytes: the prepared
%% payloads (client: shared by all clients, or built by each when they are
%% lists too large to share), and per socket the driver's buffer of a whole
%% frame and the payload delivered to the process (a list: 16 bytes per
%% byte, and room to copy it, more than once, when the process collects
%% garbage: in a 64 MiB list echo a VM peaks at about 7 GB).
-spec memory_needed(client | server, run()) -> non_neg_integer().
memory_needed(Side, #{mode := Mode, size := Size, messages := Messages, sockets := Sockets,
                      data := Data}) ->
    Frames = frame_count(Size, Messages, Data) * Size * bytes_per_byte(Data),
    {Shared, Own} = case shared_frames(Size, Messages, Data) of
                        true -> {Frames, 0};
                        false -> {0, 2 * Frames}
                    end,
    Delivered = Size + 3 * bytes_per_byte(Data) * Size,
    case {Side, Mode} of
        {client, echo} -> Shared + Sockets * (Own + Delivered);
        {client, flow} -> Shared + Sockets * (Own + Size);
        {server, _} -> Sockets * Delivered
    end.

%% ok when what memory_needed/2 counts fits in the memory available now,
%% else the resource error that refuses the run.
-spec memory_fits(client | server, run()) -> ok | {error, resource, iodata()}.
memory_fits(Side, #{sockets := Sockets, size := Size, data := Data, mode := Mode} = Run) ->
    Needed = memory_needed(Side, Run),
    case msgbench_measure:available_bytes() of
        Available when is_integer(Available), Needed > Available ->
            {error, resource,
             io_lib:format("the ~ts needs about ~w MiB for sockets = ~w of size = ~w (data = ~ts, ~ts), "
                           "more than the ~w MiB available",
                           [Side, Needed bsr 20, Sockets, Size, Data, Mode, Available bsr 20])};
        _ ->
            ok
    end.

%%--------------------------------------------------------------------
%% The watchdog: no wait without a limit, at no cost per message
%%--------------------------------------------------------------------

%% Starts a process, linked to the caller, that looks at every socket it is
%% given to watch every WATCH_EVERY_MS: a socket whose byte counters (sent
%% and received, inet:getstat/2) have not moved for IDLE_MS is reported to
%% Notify as {idle, K, IdleMs} and then shut down, which ends the read or
%% write its owner is blocked in. A closed socket is forgotten.
-spec watchdog(pid()) -> pid().
watchdog(Notify) ->
    watchdog(Notify, ?IDLE_MS, ?WATCH_EVERY_MS).

%% The same with other limits (the tests).
-spec watchdog(pid(), pos_integer(), pos_integer()) -> pid().
watchdog(Notify, IdleMs, EveryMs) ->
    spawn_link(fun() ->
                       _ = erlang:send_after(EveryMs, self(), tick),
                       watching(Notify, IdleMs, EveryMs, #{})
               end).

%% Socket K (1-based) is to be watched from now.
-spec watch(pid(), pos_integer(), gen_tcp:socket()) -> ok.
watch(Watchdog, K, Socket) ->
    Watchdog ! {watch, K, Socket},
    ok.

watching(Notify, IdleMs, EveryMs, Sockets) ->
    receive
        {watch, K, Socket} ->
            watching(Notify, IdleMs, EveryMs,
                     Sockets#{Socket => {K, -1, erlang:monotonic_time(millisecond)}});
        tick ->
            _ = erlang:send_after(EveryMs, self(), tick),
            Now = erlang:monotonic_time(millisecond),
            watching(Notify, IdleMs, EveryMs,
                     maps:fold(fun(Socket, Seen, Acc) ->
                                       look(Notify, IdleMs, Socket, Seen, Now, Acc)
                               end, #{}, Sockets))
    end.

look(Notify, IdleMs, Socket, {K, Count, Since}, Now, Acc) ->
    case inet:getstat(Socket, [recv_oct, send_oct]) of
        {ok, Stats} ->
            case lists:sum([N || {_, N} <- Stats]) of
                Count when Now - Since >= IdleMs ->
                    Notify ! {idle, K, IdleMs},
                    _ = gen_tcp:shutdown(Socket, read_write),
                    Acc;
                Count ->
                    Acc#{Socket => {K, Count, Since}};
                Moved ->
                    Acc#{Socket => {K, Moved, Now}}
            end;
        {error, _} ->
            Acc                                 % closed: done with
    end.

%%--------------------------------------------------------------------
%% Frames
%%--------------------------------------------------------------------

%% How many distinct payloads are prepared: message i is payload i rem K,
%% all of whose bytes are i rem K, so consecutive messages differ (K >= 2
%% whenever there are two messages) and a stale echo is caught.
-spec frame_count(pos_integer(), pos_integer(), data()) -> pos_integer().
frame_count(Size, Messages, Data) ->
    lists:min([Messages, ?MAX_VALUES, max(2, ?FRAMES_BUDGET div (Size * bytes_per_byte(Data)))]).

bytes_per_byte(binary) -> 1;
bytes_per_byte(list) -> ?LIST_BYTES_PER_BYTE.

%% Whether the payloads fit in the VM's literal area (1 GiB on 64-bit,
%% shared with all code) as a persistent term. A binary's bytes live outside
%% it; a list's cons cells are inside.
-spec shared_frames(pos_integer(), pos_integer(), data()) -> boolean().
shared_frames(_Size, _Messages, binary) -> true;
shared_frames(Size, Messages, list) ->
    frame_count(Size, Messages, list) * Size * ?LIST_BYTES_PER_BYTE =< ?LITERAL_BUDGET.

%% The payloads, as a tuple indexed by value + 1.
-spec frames(pos_integer(), pos_integer(), data()) -> tuple().
frames(Size, Messages, Data) ->
    list_to_tuple([payload(Data, Size, Value)
                   || Value <- lists:seq(0, frame_count(Size, Messages, Data) - 1)]).

payload(binary, Size, Value) -> binary:copy(<<Value>>, Size);
payload(list, Size, Value) -> lists:duplicate(Size, Value).

%%--------------------------------------------------------------------
%% The client: one process per socket, connected first, released together
%%--------------------------------------------------------------------

%% Connects run's sockets to Host:Port, each from its own process, releases
%% them at once when all are connected and collects what they counted.
%% Lost says that a connection broke (the server may explain why).
-spec run(run(), inet:hostname() | inet:ip_address(), inet:port_number()) ->
          {ok, outcome()} | {error, Lost :: boolean(), msgbench_worker:error_kind(), iodata()}.
run(#{size := Size, messages := Messages, sockets := Sockets, data := Data} = Run, Host, Port) ->
    %% The prepared payloads are a persistent term: a literal that every
    %% client reads and sends without copying it into its heap. Lists too
    %% large for the VM's literal area are built by each client instead.
    Key = {?MODULE, frames},
    Source = case shared_frames(Size, Messages, Data) of
                 true ->
                     persistent_term:put(Key, frames(Size, Messages, Data)),
                     {shared, Key};
                 false ->
                     own
             end,
    Coordinator = self(),
    Watchdog = watchdog(Coordinator, idle_ms(Run), ?WATCH_EVERY_MS),
    Latency = case Run of
                  #{mode := echo, rate := Rate} when Rate > 0 -> msgbench_histogram:new_merged();
                  _ -> none
              end,
    try
        Clients = [begin
                       {Pid, Monitor} = spawn_monitor(fun() ->
                                                              client(Coordinator, Watchdog, K, Run, Source,
                                                                     Latency, Host, Port)
                                                      end),
                       {Pid, {K, Monitor}}
                   end || K <- lists:seq(1, Sockets)],
        ById = maps:from_list(Clients),
        case await_connected(ById, Sockets) of
            ok ->
                erlang:garbage_collect(),
                Release = msgbench_measure:now(),
                _ = [Pid ! {go, Coordinator} || {Pid, _} <- Clients],
                with_latency(Latency, collect(ById, Messages, Release, []));
            {error, _Lost, _Kind, _Message} = Error ->
                stop_clients(ById),
                Error
        end
    after
        unlink(Watchdog),
        exit(Watchdog, kill),
        _ = Source =:= own orelse persistent_term:erase(Key)
    end.

%% An open loop's socket may be quiet between messages for sockets / rate
%% s: the watchdog allows that on top of its limit.
idle_ms(#{mode := echo, rate := Rate, sockets := Sockets}) when Rate > 0 ->
    ?IDLE_MS + ceil(Sockets * 1000 / Rate);
idle_ms(_Run) ->
    ?IDLE_MS.

%% The open loop's histogram, all sockets together, and its largest value.
with_latency(none, Outcome) ->
    Outcome;
with_latency(Merged, {ok, Outcome}) ->
    {ok, Outcome#{latency => msgbench_histogram:pairs(Merged)}};
with_latency(_Merged, Error) ->
    Error.

await_connected(_ById, 0) ->
    ok;
await_connected(ById, Left) ->
    receive
        {connected, Pid} when is_map_key(Pid, ById) ->
            await_connected(ById, Left - 1);
        {connect_failed, Pid, Reason} when is_map_key(Pid, ById) ->
            {K, _} = maps:get(Pid, ById),
            Kind = case Reason of
                       emfile -> resource;
                       enfile -> resource;
                       _ -> internal
                   end,
            {error, false, Kind,
             io_lib:format("cannot connect socket ~w of ~w to the server: ~ts",
                           [K, maps:size(ById), describe_reason(Reason)])};
        {'DOWN', _, process, Pid, Reason} when is_map_key(Pid, ById) ->
            {K, _} = maps:get(Pid, ById),
            {error, false, internal, io_lib:format("the client of socket ~w crashed: ~0P", [K, Reason, 20])}
    end.

collect(ById, _Messages, Release, Done) when length(Done) =:= map_size(ById) ->
    Wall = lists:max([Ended || #{ended := Ended} <- Done]) - Release,
    Sum = fun(Key) -> lists:sum([maps:get(Key, D) || D <- Done]) end,
    Outcome = #{elapsed => [Elapsed || #{elapsed := Elapsed} <- Done],
                wall => max(Wall, 1),
                sent => Sum(sent), sent_bytes => Sum(sent_bytes),
                received => Sum(received), received_bytes => Sum(received_bytes),
                mismatches => Sum(mismatches)},
    case [Max || #{latency_max := Max} <- Done] of
        [] -> {ok, Outcome};
        Maxima -> {ok, Outcome#{latency_max => lists:max(Maxima)}}
    end;
collect(ById, Messages, Release, Done) ->
    receive
        {done, Pid, Counts} when is_map_key(Pid, ById) ->
            collect(ById, Messages, Release, [Counts | Done]);
        {idle, K, IdleMs} ->
            stop_clients(ById),
            {error, false, internal,
             io_lib:format("socket ~w made no progress for ~w s (~w messages per socket)",
                           [K, IdleMs div 1000, Messages])};
        {failed, Pid, Reason, Completed} when is_map_key(Pid, ById) ->
            %% The first failure is the story; the others' connections close
            %% with their processes.
            stop_clients(ById),
            {K, _} = maps:get(Pid, ById),
            describe_failure(K, Reason, Completed, Messages);
        {'DOWN', _, process, Pid, Reason} when is_map_key(Pid, ById), Reason =/= normal ->
            stop_clients(ById),
            {K, _} = maps:get(Pid, ById),
            {error, false, internal, io_lib:format("the client of socket ~w crashed: ~0P", [K, Reason, 20])}
    end.

stop_clients(ById) ->
    _ = [begin
             erlang:demonitor(Monitor, [flush]),
             exit(Pid, kill)
         end || {Pid, {_K, Monitor}} <- maps:to_list(ById)],
    ok.

%% Completed: round trips (echo) or frames written (flow).
describe_failure(K, {Step, timeout}, Completed, Messages) ->
    {error, false, internal,
     io_lib:format("socket ~w waited ~w s in vain (~ts) after ~w of ~w messages",
                   [K, ?IDLE_MS div 1000, Step, Completed, Messages])};
describe_failure(K, {ack, {bad_ack, Ack}}, _Completed, _Messages) ->
    {error, false, internal,
     io_lib:format("socket ~w: the server acked with ~0P, not a one-byte frame of 6", [K, Ack, 10])};
describe_failure(K, {Step, Reason}, Completed, Messages) ->
    {error, true, internal,
     io_lib:format("the server closed socket ~w after ~w of ~w messages (~ts: ~ts)",
                   [K, Completed, Messages, Step, describe_reason(Reason)])}.

describe_reason(Reason) when is_atom(Reason) ->
    case inet:format_error(Reason) of
        "unknown POSIX error" ++ _ -> atom_to_list(Reason);
        Text -> [atom_to_list(Reason), " (", Text, ")"]
    end;
describe_reason(Reason) ->
    io_lib:format("~0P", [Reason, 20]).

client(Coordinator, Watchdog, K, Run, Source, Latency, Host, Port) ->
    #{size := Size, messages := Messages, data := Data, active := Active} = Run,
    Frames = case Source of
                 {shared, Key} -> persistent_term:get(Key);
                 own -> frames(Size, Messages, Data)
             end,
    case gen_tcp:connect(Host, Port, [inet | socket_options(Data)], ?CONNECT_MS) of
        {ok, Socket} ->
            ok = watch(Watchdog, K, Socket),
            Coordinator ! {connected, self()},
            receive
                {go, Coordinator} -> ok
            end,
            ok = arm(Socket, Active),
            Coordinator ! case sequence(Socket, Run, Frames, Latency) of
                              {ok, Counts} -> {done, self(), Counts};
                              {failed, Reason, Completed} -> {failed, self(), Reason, Completed}
                          end,
            gen_tcp:close(Socket);
        {error, Reason} ->
            Coordinator ! {connect_failed, self(), Reason}
    end.

%% {active, N} is set once and re-armed at each tcp_passive; {active, once}
%% is armed by each recv/3; passive needs nothing.
-spec arm(gen_tcp:socket(), msgbench_erlang_options:socket_active()) -> ok | {error, term()}.
arm(Socket, N) when is_integer(N) -> inet:setopts(Socket, [{active, N}]);
arm(_Socket, _Active) -> ok.

sequence(Socket, #{mode := echo, rate := Rate} = Run, Frames, Latency) when Rate > 0 ->
    msgbench_socket_open:sequence(Socket, Run, Frames, Latency);
sequence(Socket, #{mode := echo, messages := Messages, check_content := Check,
                   active := Active}, Frames, _Latency) ->
    FrameBytes = payload_bytes(element(1, Frames)),
    Start = msgbench_measure:now(),
    case echo(Socket, Active, Frames, tuple_size(Frames), Check, FrameBytes, Messages,
              0, 0, 0, 0, 0) of
        {ok, Sent, SentBytes, Received, ReceivedBytes, Mismatches} ->
            Ended = msgbench_measure:now(),
            {ok, #{elapsed => Ended - Start, ended => Ended,
                   sent => Sent, sent_bytes => SentBytes,
                   received => Received, received_bytes => ReceivedBytes,
                   mismatches => Mismatches}};
        {failed, _Reason, _Completed} = Failed ->
            Failed
    end;
sequence(Socket, #{mode := flow, messages := Messages, active := Active}, Frames, _Latency) ->
    FrameBytes = payload_bytes(element(1, Frames)),
    Start = msgbench_measure:now(),
    case flow(Socket, Frames, tuple_size(Frames), FrameBytes, Messages, 0, 0) of
        {ok, Sent, SentBytes} ->
            %% The server reads to end of stream and then answers with a
            %% one-byte frame: the receiver has the last byte.
            case gen_tcp:shutdown(Socket, write) of
                ok ->
                    case recv(Socket, Active, ?IDLE_MS) of
                        {ok, Ack} when Ack =:= <<6>>; Ack =:= [6] ->
                            Ended = msgbench_measure:now(),
                            {ok, #{elapsed => Ended - Start, ended => Ended,
                                   sent => Sent, sent_bytes => SentBytes,
                                   received => 0, received_bytes => 0, mismatches => 0}};
                        {ok, Other} ->
                            {failed, {ack, {bad_ack, Other}}, Sent};
                        {error, Reason} ->
                            {failed, {"waiting for the ack", Reason}, Sent}
                    end;
                {error, Reason} ->
                    {failed, {"shutdown(write)", Reason}, Sent}
            end;
        {failed, _Reason, _Completed} = Failed ->
            Failed
    end.

%% One message at a time: send message i, take its echo, compare, and only
%% then send message i + 1 (whose bytes have another value).
echo(_Socket, _Active, _Frames, _K, _Check, _FrameBytes, Messages,
     Sent, SentBytes, Received, ReceivedBytes, Mismatches) when Sent =:= Messages ->
    {ok, Sent, SentBytes, Received, ReceivedBytes, Mismatches};
echo(Socket, Active, Frames, K, Check, FrameBytes, Messages,
     Sent, SentBytes, Received, ReceivedBytes, Mismatches) ->
    Value = Sent rem K,
    Payload = element(Value + 1, Frames),
    case gen_tcp:send(Socket, Payload) of
        ok ->
            case recv(Socket, Active) of
                {ok, Echo} ->
                    {Mismatch, EchoBytes} = count_echo(Check, Echo, Payload, Value, FrameBytes),
                    echo(Socket, Active, Frames, K, Check, FrameBytes, Messages,
                         Sent + 1, SentBytes + FrameBytes, Received + 1, ReceivedBytes + EchoBytes,
                         Mismatches + Mismatch);
                {error, Reason} ->
                    {failed, {"reading an echo", Reason}, Received}
            end;
        {error, Reason} ->
            {failed, {"sending", Reason}, Received}
    end.

%% Every message as fast as gen_tcp:send returns: the inet driver writes
%% what the kernel takes and queues the rest; past its high watermark the
%% sender is suspended until the queue drains.
flow(_Socket, _Frames, _K, _FrameBytes, Messages, Sent, SentBytes) when Sent =:= Messages ->
    {ok, Sent, SentBytes};
flow(Socket, Frames, K, FrameBytes, Messages, Sent, SentBytes) ->
    case gen_tcp:send(Socket, element(Sent rem K + 1, Frames)) of
        ok -> flow(Socket, Frames, K, FrameBytes, Messages, Sent + 1, SentBytes + FrameBytes);
        {error, Reason} -> {failed, {"sending", Reason}, Sent}
    end.
