%% The server half of the socket workload: a VM of its own, started by the
%% worker (the client) from target.toml's serve command (spec/README.md,
%% "Peers"). It listens on 0.0.0.0:port, prints {"type":"listening"}, accepts
%% exactly `sockets` connections in one acceptor process and serves each in
%% a process of its own (echo: take a frame, send it back; flow: take frames
%% and drop them, counting, and at end of stream answer with a one-byte
%% frame), then prints {"type":"served"} with what it received. It gives up,
%% with an error, as soon as its stdin closes: the worker is gone.
-module(msgbench_socket_server).

-export([serve/4]).

%% The acceptor waits this long for all the connections.
-define(ACCEPT_MS, 60000).

%% Serves Run on Port. Emit prints one protocol line; WatchStdin returns
%% when the server's stdin has closed (it runs in a process of its own).
%% Returns after the served line, or with the error to print instead.
-spec serve(msgbench_socket:run(), inet:port_number(), fun((map()) -> ok), fun(() -> term())) ->
          ok | {error, msgbench_worker:error_kind(), iodata()}.
serve(#{sockets := Sockets} = Run, Port, Emit, WatchStdin) ->
    case preflight(Run) of
        ok ->
            case listen(Run, Port) of
                {ok, Listener} ->
                    {ok, Actual} = inet:port(Listener),
                    Emit(#{type => listening, port => Actual}),
                    Server = self(),
                    Watcher = spawn_link(fun() -> _ = WatchStdin(), Server ! stdin_closed end),
                    Watchdog = msgbench_socket:watchdog(Server),
                    Acceptor = spawn_link(fun() -> accept(Server, Watchdog, Listener, Run) end),
                    Outcome = collect(Sockets, 0, 0, 0),
                    %% The VM halts next; this is for the tests.
                    _ = [begin unlink(Pid), exit(Pid, kill) end || Pid <- [Watcher, Watchdog, Acceptor]],
                    case Outcome of
                        {ok, Messages, Bytes} ->
                            Emit(#{type => served, messages => Messages, bytes => Bytes});
                        {error, _Kind, _Message} = Error ->
                            _ = gen_tcp:close(Listener),
                            Error
                    end;
                {error, _Kind, _Message} = Error ->
                    Error
            end;
        Error ->
            Error
    end.

%% Handlers, the acceptor, the stdin watcher and the watchdog.
preflight(#{sockets := Sockets} = Run) ->
    case msgbench_limits:process_headroom(io_lib:format("sockets = ~w", [Sockets]), Sockets + 3) of
        ok -> msgbench_socket:memory_fits(server, Run);
        Error -> Error
    end.

listen(#{sockets := Sockets, data := Data}, Port) ->
    Options = [inet, {ip, {0, 0, 0, 0}}, {reuseaddr, true}, {backlog, max(128, Sockets)}
               | msgbench_socket:socket_options(Data)],
    case gen_tcp:listen(Port, Options) of
        {ok, Listener} ->
            {ok, Listener};
        {error, eaddrinuse} ->
            {error, resource,
             io_lib:format("port ~w is in use (eaddrinuse): give another port, or port = 0 for any "
                           "free one", [Port])};
        {error, Reason} ->
            {error, resource, io_lib:format("the server cannot listen on port ~w: ~0p", [Port, Reason])}
    end.

accept(Server, Watchdog, Listener, #{sockets := Sockets} = Run) ->
    Deadline = erlang:monotonic_time(millisecond) + ?ACCEPT_MS,
    accept(Server, Watchdog, Listener, Run, 1, Sockets, Deadline).

accept(_Server, _Watchdog, Listener, _Run, K, Sockets, _Deadline) when K > Sockets ->
    gen_tcp:close(Listener);   % all accepted: no more connections
accept(Server, Watchdog, Listener, Run, K, Sockets, Deadline) ->
    Left = max(0, Deadline - erlang:monotonic_time(millisecond)),
    case gen_tcp:accept(Listener, Left) of
        {ok, Socket} ->
            Handler = spawn(fun() -> handler(Server, K, Run) end),
            case gen_tcp:controlling_process(Socket, Handler) of
                ok ->
                    ok = msgbench_socket:watch(Watchdog, K, Socket),
                    Handler ! {socket, Socket},
                    accept(Server, Watchdog, Listener, Run, K + 1, Sockets, Deadline);
                {error, Reason} ->
                    exit(Handler, kill),
                    Server ! {accept_failed, internal,
                              io_lib:format("connection ~w: controlling_process: ~0p", [K, Reason])}
            end;
        {error, timeout} ->
            Server ! {accept_failed, internal,
                      io_lib:format("the server accepted ~w of ~w connections within ~w s",
                                    [K - 1, Sockets, ?ACCEPT_MS div 1000])};
        {error, Reason} when Reason =:= emfile; Reason =:= enfile ->
            Server ! {accept_failed, resource,
                      io_lib:format("the server cannot accept connection ~w of ~w: ~0p (too many open "
                                    "files: raise the limit, ulimit -n)", [K, Sockets, Reason])};
        {error, Reason} ->
            Server ! {accept_failed, internal,
                      io_lib:format("the server cannot accept connection ~w of ~w: ~0p",
                                    [K, Sockets, Reason])}
    end.

collect(Sockets, Sockets, Messages, Bytes) ->
    {ok, Messages, Bytes};
collect(Sockets, Done, Messages, Bytes) ->
    receive
        {served, M, B} ->
            collect(Sockets, Done + 1, Messages + M, Bytes + B);
        {failed, Message} ->
            {error, internal, Message};
        {accept_failed, Kind, Message} ->
            {error, Kind, Message};
        {idle, K, IdleMs} ->
            {error, internal, io_lib:format("connection ~w made no progress for ~w s (~w of ~w "
                                            "connections finished)",
                                            [K, IdleMs div 1000, Done, Sockets])};
        stdin_closed ->
            {error, internal,
             io_lib:format("the server's stdin closed before its work was done "
                           "(~w of ~w connections finished)", [Done, Sockets])}
    end.

handler(Server, K, #{mode := Mode, size := Size, active := Active}) ->
    Socket = receive {socket, S} -> S end,
    Outcome = try
                  case msgbench_socket:arm(Socket, Active) of
                      ok when Mode =:= echo -> echo(Socket, Active, Size, 0, 0);
                      ok -> discard(Socket, Active, Size, 0, 0);
                      {error, ArmError} -> {failed, {"setting the socket active", ArmError}, 0}
                  end
              catch
                  Class:Crash:Stack ->
                      {failed, {"crashed", {Class, Crash, Stack}}, 0}
              end,
    _ = gen_tcp:close(Socket),
    Server ! case Outcome of
                 {ok, Messages, Bytes} ->
                     {served, Messages, Bytes};
                 {failed, {What, Reason}, Messages} ->
                     {failed, io_lib:format("connection ~w failed after ~w messages: ~ts: ~0P",
                                            [K, Messages, What, Reason, 20])}
             end.

%% Echo every frame back as it came, until the client closes.
echo(Socket, Active, Size, Messages, Bytes) ->
    case msgbench_socket:recv(Socket, Active) of
        {ok, Frame} ->
            case msgbench_socket:payload_bytes(Frame) of
                Size ->
                    case gen_tcp:send(Socket, Frame) of
                        ok -> echo(Socket, Active, Size, Messages + 1, Bytes + Size);
                        {error, Reason} -> {failed, {"echoing", Reason}, Messages}
                    end;
                Other ->
                    {failed, {"reading", {frame_size, Other, expected, Size}}, Messages}
            end;
        {error, closed} ->
            {ok, Messages, Bytes};
        {error, Reason} ->
            {failed, {"reading", Reason}, Messages}
    end.

%% Take every frame and drop it, counting, until the client shuts its side
%% down; then a one-byte frame says that the last byte has arrived.
discard(Socket, Active, Size, Messages, Bytes) ->
    case msgbench_socket:recv(Socket, Active) of
        {ok, Frame} ->
            case msgbench_socket:payload_bytes(Frame) of
                Size -> discard(Socket, Active, Size, Messages + 1, Bytes + Size);
                Other -> {failed, {"reading", {frame_size, Other, expected, Size}}, Messages}
            end;
        {error, closed} ->
            case gen_tcp:send(Socket, <<6>>) of
                ok -> {ok, Messages, Bytes};
                {error, Reason} -> {failed, {"sending the ack", Reason}, Messages}
            end;
        {error, Reason} ->
            {failed, {"reading", Reason}, Messages}
    end.
