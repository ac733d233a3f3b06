%% A connection of the chat server (docs/chat-server.md): the process that
%% owns its socket. After the WebSocket handshake its first message says
%% what it is: a user ({"join": ...}), which passes every later message to
%% its group and writes what its group delivers to its client, keeping the
%% last H payloads as its history; or a control connection ({"stats": true}),
%% which answers each stats request with the server's view of itself.
%%
%% Reads are active, {active, N}: a user waits for two things at once, its
%% client's frames and its group's deliveries, and in active mode both are
%% messages in its mailbox, one receive. N bounds how many unread packets a
%% flooding client can put there before the socket turns passive and waits
%% to be re-armed ({tcp_passive, _}): flow control, at one inet:setopts per
%% N packets rather than one per packet as {active, once} would cost.
%%
%% A connection that has had nothing to do for ?HIBERNATE_AFTER_MS
%% hibernates (erlang:hibernate/3, as Cowboy's and Phoenix's idle websockets
%% do): a realistic user is idle most of the time, and between its sends and
%% deliveries its heap holds the garbage of the last frames on top of the
%% few kB it needs (its history, the socket, its group): 10-25 kB, and the
%% dead refc binaries it references, that a generational collection leaves
%% until the old heap fills. Hibernation collects it and shrinks the heap to
%% what is live (docs/chat-server-soak.md).
-module(msgbench_chat_conn).

-export([start_acceptor/1, loop/1]).

-define(ACTIVE, 16).
-define(HANDSHAKE_MS, 30000).
-define(JOIN_MS, 30000).
-define(MAX_FRAME, 16 * 1024 * 1024).
%% Long enough that a user under stress (think 0) never hibernates between
%% two frames, short enough that a realistic one (think 5 s: a send and a
%% delivery every 5 s on average) spends most of its time hibernated.
-define(HIBERNATE_AFTER_MS, 1000).

-record(user, {number :: integer(),
               group :: pid(),
               history_max :: non_neg_integer(),
               history = queue:new() :: queue:queue(binary()),
               history_size = 0 :: non_neg_integer()}).

-record(conn, {socket :: gen_tcp:socket(),
               buffer = <<>> :: binary(),
               partial = none :: msgbench_ws:partial(),
               role = new :: new | {stats, scheduler:sched_sample() | undefined} | #user{}}).

%% A process waiting in gen_tcp:accept; once it has a connection it starts
%% the next acceptor and becomes that connection's process (it owns the
%% socket since it accepted it: no hand-over).
-spec start_acceptor(gen_tcp:socket()) -> pid().
start_acceptor(Listen) ->
    spawn(fun() -> accept(Listen) end).

accept(Listen) ->
    case gen_tcp:accept(Listen) of
        {ok, Socket} ->
            _ = start_acceptor(Listen),
            connection(Socket);
        {error, closed} ->
            ok;
        {error, Reason} ->
            %% Out of file descriptors or ports (emfile, system_limit):
            %% say so and try again, as the clients that found no room will.
            log("accept: ~ts", [inet:format_error(Reason)]),
            timer:sleep(100),
            accept(Listen)
    end.

connection(Socket) ->
    case msgbench_ws:upgrade(Socket, ?HANDSHAKE_MS) of
        ok ->
            ok = inet:setopts(Socket, [{active, ?ACTIVE}]),
            loop(#conn{socket = Socket});
        {error, Reason} ->
            log("handshake refused: ~0P", [Reason, 12]),
            gen_tcp:close(Socket)
    end.

%% Exported for erlang:hibernate/3, which wakes the process up in it.
-spec loop(#conn{}) -> ok.
loop(#conn{socket = Socket} = Conn) ->
    receive
        {deliver, Opcode, Payload} ->
            deliver(Opcode, Payload, Conn);
        {tcp, Socket, Data} ->
            frames(Conn#conn{buffer = append(Conn#conn.buffer, Data)});
        {tcp_passive, Socket} ->
            ok = inet:setopts(Socket, [{active, ?ACTIVE}]),
            loop(Conn);
        {tcp_closed, Socket} ->
            gone(Conn);
        {tcp_error, Socket, _Reason} ->
            gone(Conn);
        {'DOWN', _Monitor, process, _Group, Reason} ->
            close(Conn, 1011, io_lib:format("the group ended: ~0P", [Reason, 8]))
    after ?HIBERNATE_AFTER_MS ->
        erlang:hibernate(?MODULE, loop, [Conn])
    end.

append(<<>>, Data) -> Data;
append(Buffer, Data) -> <<Buffer/binary, Data/binary>>.

%% A delivery from the group: to the client as is, and into the history.
deliver(Opcode, Payload, #conn{socket = Socket, role = #user{} = User} = Conn) ->
    case gen_tcp:send(Socket, msgbench_ws:encode(Opcode, Payload)) of
        ok -> loop(Conn#conn{role = remember(Payload, User)});
        {error, _} -> gone(Conn)
    end.

remember(_Payload, #user{history_max = 0} = User) ->
    User;
remember(Payload, #user{history = History, history_size = Size, history_max = Max} = User) when Size < Max ->
    User#user{history = queue:in(Payload, History), history_size = Size + 1};
remember(Payload, #user{history = History} = User) ->
    User#user{history = queue:in(Payload, queue:drop(History))}.

%% Every whole frame in the buffer, in order; the rest waits for more bytes.
frames(#conn{buffer = Buffer, partial = Partial} = Conn) ->
    case msgbench_ws:decode(Buffer, ?MAX_FRAME) of
        more ->
            loop(Conn);
        {error, {Status, Reason}} ->
            close(Conn, Status, Reason);
        {ok, Frame, Rest} ->
            case msgbench_ws:assemble(Frame, Partial) of
                {message, Opcode, Payload, Next} ->
                    message(Opcode, Payload, Conn#conn{buffer = Rest, partial = Next});
                {control, Control, Payload, Next} ->
                    control(Control, Payload, Conn#conn{buffer = Rest, partial = Next});
                {more, Next} ->
                    frames(Conn#conn{buffer = Rest, partial = Next});
                {error, {Status, Reason}} ->
                    close(Conn, Status, Reason)
            end
    end.

control(ping, Payload, #conn{socket = Socket} = Conn) ->
    case gen_tcp:send(Socket, msgbench_ws:encode(pong, Payload)) of
        ok -> frames(Conn);
        {error, _} -> gone(Conn)
    end;
control(pong, _Payload, Conn) ->
    frames(Conn);
control(close, Payload, #conn{socket = Socket} = Conn) ->
    %% The closing handshake: echo the client's status (RFC 6455 5.5.1).
    Status = case Payload of
                 <<Code:16, _/binary>> -> <<Code:16>>;
                 _ -> <<>>
             end,
    _ = gen_tcp:send(Socket, msgbench_ws:encode(close, Status)),
    gone(Conn).

%% A user's message goes to its group, whose process picks the peer.
message(Opcode, Payload, #conn{role = #user{group = Group}} = Conn) ->
    ok = msgbench_chat_room:post(Group, Opcode, Payload),
    frames(Conn);
message(text, Payload, #conn{role = new} = Conn) ->
    case msgbench_json:decode(Payload) of
        {ok, #{<<"join">> := #{<<"group">> := Group, <<"user">> := Number, <<"history">> := History}}}
          when is_integer(Group), Group >= 0, is_integer(Number), is_integer(History), History >= 0 ->
            join(Group, Number, History, Conn);
        {ok, #{<<"stats">> := true}} ->
            stats(Conn#conn{role = {stats, undefined}});
        _ ->
            refuse_first(Payload, Conn)
    end;
message(text, Payload, #conn{role = {stats, _}} = Conn) ->
    case msgbench_json:decode(Payload) of
        {ok, #{<<"stats">> := true}} -> stats(Conn);
        _ -> close(Conn, 1008, ["a control connection takes {\"stats\": true} only, not ", Payload])
    end;
message(_Opcode, Payload, Conn) ->
    refuse_first(Payload, Conn).

refuse_first(Payload, Conn) ->
    close(Conn, 1008, ["the first message must be {\"join\": {\"group\": G, \"user\": U, \"history\": H}} "
                       "or {\"stats\": true}, not ", binary:part(Payload, 0, min(60, byte_size(Payload)))]).

join(GroupNumber, Number, History, #conn{socket = Socket} = Conn) ->
    Group = msgbench_chat_server:group(GroupNumber),
    _ = erlang:monitor(process, Group),
    case msgbench_chat_room:join(Group, ?JOIN_MS) of
        ok ->
            counters:add(msgbench_chat_server:connections(), 1, 1),
            User = #user{number = Number, group = Group, history_max = History},
            %% The handshake and the join's JSON grew the heap to several kB
            %% that an idle user would keep for good: collect it once here
            %% (memory per connection, docs/decisions.md).
            true = erlang:garbage_collect(),
            case gen_tcp:send(Socket, msgbench_ws:encode(text, msgbench_json:encode(#{joined => Number}))) of
                ok -> frames(Conn#conn{role = User});
                {error, _} -> gone(Conn#conn{role = User})
            end;
        {error, timeout} ->
            close(Conn, 1011, io_lib:format("group ~b did not answer the join within ~b ms", [GroupNumber, ?JOIN_MS]))
    end.

%% The server's view of itself (docs/chat-server.md, "Stats"); the
%% schedulers' utilisation since this connection's previous request.
stats(#conn{socket = Socket, role = {stats, Since}} = Conn) ->
    {Utilization, Next} = msgbench_vm_stats:scheduler_utilization(Since),
    Answer = maps:merge(msgbench_vm_stats:process(),
                        #{<<"connections">> => counters:get(msgbench_chat_server:connections(), 1),
                          <<"processes">> => erlang:system_info(process_count),
                          <<"runtime">> => maps:merge(msgbench_vm_stats:runtime(), Utilization)}),
    case gen_tcp:send(Socket, msgbench_ws:encode(text, msgbench_json:encode(Answer))) of
        ok -> frames(Conn#conn{role = {stats, Next}});
        {error, _} -> gone(Conn)
    end.

close(#conn{socket = Socket} = Conn, Status, Reason) ->
    log("closing a connection (~b): ~ts", [Status, Reason]),
    _ = gen_tcp:send(Socket, msgbench_ws:close_frame(Status, Reason)),
    gone(Conn).

%% The connection is over: the group sees this process end (its monitor)
%% and drops the user.
gone(#conn{socket = Socket, role = Role}) ->
    case Role of
        #user{} -> counters:sub(msgbench_chat_server:connections(), 1, 1);
        _ -> ok
    end,
    gen_tcp:close(Socket).

log(Format, Args) ->
    io:format(standard_error, "msgbench chat server: " ++ Format ++ "~n", Args).
