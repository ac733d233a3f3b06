%% The chat server kind's server (docs/chat-server.md): WebSocket users
%% joined to groups, as Chut, a process per connection (msgbench_chat_conn)
%% and per group (msgbench_chat_room). Started by target.toml's chat_server,
%% the script chat-server, as
%%
%%   erl [VM flags] -noshell ... -s msgbench_chat_server main -extra --listen HOST:PORT
%%
%% it listens, writes {"listening": PORT} on stdout (and nothing else there
%% afterwards: logs go to standard_error), and serves until SIGTERM (which
%% halts it at once, msgbench_chat_sigterm) or until its stdin, when it is a
%% pipe, closes (the load generator that started it is gone).
-module(msgbench_chat_server).

-export([main/0, parse_args/1, start/2, group/1, connections/0]).

%% How many processes wait in gen_tcp:accept at once: enough that a burst of
%% connects (the load generator opens thousands at once) keeps every
%% scheduler accepting.
-define(ACCEPTORS, 16).
%% serve/4 never returns (it owns the listening socket until the VM stops),
%% so neither does the fun main/0 spawns it in: by design.
-dialyzer({no_return, main/0}).
-define(GROUPS, msgbench_chat_groups).
-define(REGISTRY, msgbench_chat_registry).
-define(CONNECTIONS, {?MODULE, connections}).

-spec main() -> ok.
main() ->
    case parse_args(init:get_plain_arguments()) of
        {ok, Ip, Port} ->
            %% A process of its own, so that init finishes booting and
            %% handles SIGTERM (init:stop/0) as it would for any VM.
            Ready = make_ref(),
            Self = self(),
            _ = spawn(fun() -> serve(Ip, Port, Self, Ready) end),
            receive {Ready, Listening} -> Listening end;
        {error, Message} ->
            fail(2, Message)
    end.

%% --listen HOST:PORT, HOST an IPv4 address (0.0.0.0: every address), PORT 0
%% for a free one.
-spec parse_args([string()]) -> {ok, inet:ip4_address(), inet:port_number()} | {error, iolist()}.
parse_args(["--listen", Address]) ->
    case string:split(Address, ":", trailing) of
        [Host, PortText] ->
            case {inet:parse_ipv4strict_address(Host), string:to_integer(PortText)} of
                {{ok, Ip}, {Port, ""}} when Port >= 0, Port =< 65535 -> {ok, Ip, Port};
                _ -> {error, bad_listen(Address)}
            end;
        _ ->
            {error, bad_listen(Address)}
    end;
parse_args(Args) ->
    {error, io_lib:format("arguments ~0p: expected --listen HOST:PORT", [Args])}.

bad_listen(Address) ->
    io_lib:format("--listen ~ts: expected HOST:PORT, HOST an IPv4 address (0.0.0.0 for all), PORT 0..65535",
                  [Address]).

%% Listens and starts the groups' table, their registry and the acceptors:
%% the server, less its command line, stdout and signals (the tests start it
%% so). The calling process owns the listening socket and the table, so the
%% server lasts as long as it does.
-spec start(inet:ip4_address(), inet:port_number()) -> {ok, inet:port_number()} | {error, inet:posix()}.
start(Ip, Port) ->
    Options = [binary, {ip, Ip}, {packet, http_bin}, {active, false}, {reuseaddr, true},
               {backlog, 8192}, {nodelay, true}],
    case gen_tcp:listen(Port, Options) of
        {ok, Listen} ->
            _ = ets:new(?GROUPS, [named_table, public, {read_concurrency, true}]),
            persistent_term:put(?CONNECTIONS, counters:new(1, [write_concurrency])),
            register(?REGISTRY, spawn_link(fun registry/0)),
            [msgbench_chat_conn:start_acceptor(Listen) || _ <- lists:seq(1, ?ACCEPTORS)],
            inet:port(Listen);
        {error, _} = Error ->
            Error
    end.

-spec serve(inet:ip4_address(), inet:port_number(), pid(), reference()) -> no_return().
serve(Ip, Port, Main, Ready) ->
    case start(Ip, Port) of
        {ok, Actual} ->
            ok = io:put_chars(standard_io, [msgbench_json:encode(#{listening => Actual}), $\n]),
            ok = msgbench_chat_sigterm:install(),
            _ = watch_stdin(),
            Main ! {Ready, ok},
            %% The listening socket lives as long as its owner, this process.
            receive after infinity -> ok end;
        {error, Reason} ->
            fail(1, io_lib:format("cannot listen on ~ts:~b: ~ts", [inet:ntoa(Ip), Port, inet:format_error(Reason)]))
    end.

%% The group's process, started by the registry the first time a user joins
%% it; every later join reads the table alone.
-spec group(non_neg_integer()) -> pid().
group(Number) ->
    case ets:lookup(?GROUPS, Number) of
        [{_, Room}] -> Room;
        [] ->
            Ref = make_ref(),
            ?REGISTRY ! {group, Number, self(), Ref},
            receive {Ref, Room} -> Room end
    end.

registry() ->
    receive
        {group, Number, From, Ref} ->
            Room = case ets:lookup(?GROUPS, Number) of
                       [{_, Found}] -> Found;
                       [] ->
                           Started = msgbench_chat_room:start(),
                           true = ets:insert(?GROUPS, {Number, Started}),
                           Started
                   end,
            From ! {Ref, Room},
            registry()
    end.

%% The users connected now: a counter the connections move themselves.
-spec connections() -> counters:counters_ref().
connections() ->
    persistent_term:get(?CONNECTIONS).

%% Stdin closes when the process that started this server is gone: stop
%% then. Only a pipe or a socket says so; stdin at /dev/null (a server
%% started by hand in the background) is at its end from the start.
watch_stdin() ->
    case file:read_link("/proc/self/fd/0") of
        {ok, "pipe:" ++ _} -> spawn(fun read_stdin/0);
        {ok, "socket:" ++ _} -> spawn(fun read_stdin/0);
        _ -> ok
    end.

read_stdin() ->
    case io:get_line("") of
        eof -> erlang:halt(0);
        {error, _} -> erlang:halt(0);
        _Line -> read_stdin()
    end.

-spec fail(non_neg_integer(), iodata()) -> no_return().
fail(Status, Message) ->
    io:format(standard_error, "msgbench chat server: ~ts~n", [Message]),
    erlang:halt(Status).
