%% The chat server's connection processes over a real socket: a user that
%% has nothing to do hibernates (its heap shrinks to what is live, the
%% memory a realistic soak would otherwise grow, docs/chat-server-soak.md)
%% and wakes up to deliver and to send as before.
-module(msgbench_chat_conn_tests).

-include_lib("eunit/include/eunit.hrl").

idle_users_hibernate_and_wake_up_test_() ->
    {setup, fun start_server/0, fun stop_server/1,
     fun({_Owner, Port}) -> {timeout, 30, fun() -> idle_users_hibernate(Port) end} end}.

idle_users_hibernate(Port) ->
    A = join(Port, 1),
    B = join(Port, 2),
    [UserA, UserB] = users(0),
    %% Traffic first, so the heaps hold a frame's garbage (and the
    %% histories a payload each) when the users go idle.
    [ok = send_text(A, <<"to b ", (integer_to_binary(I))/binary>>) || I <- lists:seq(1, 20)],
    [?assertEqual({text, <<"to b ", (integer_to_binary(I))/binary>>}, recv_frame(B)) || I <- lists:seq(1, 20)],
    ok = wait_hibernated([UserA, UserB]),
    %% Hibernated, a user wakes up for its client's frame and for its
    %% group's delivery alike.
    ok = send_text(A, <<"after a rest">>),
    ?assertEqual({text, <<"after a rest">>}, recv_frame(B)),
    ok = send_text(B, <<"and back">>),
    ?assertEqual({text, <<"and back">>}, recv_frame(A)),
    ok = gen_tcp:close(A),
    ok = gen_tcp:close(B).

%% Both processes in erlang:hibernate/3 within 10 s (they hibernate after
%% a second idle; the margin is a loaded machine's).
wait_hibernated(Users) ->
    wait_hibernated(Users, erlang:monotonic_time(millisecond) + 10000).

wait_hibernated(Users, Deadline) ->
    States = [erlang:process_info(U, current_function) || U <- Users],
    case lists:all(fun(S) -> S =:= {current_function, {erlang, hibernate, 3}} end, States) of
        true -> ok;
        false ->
            case erlang:monotonic_time(millisecond) > Deadline of
                true -> error({not_hibernated, States});
                false -> timer:sleep(50), wait_hibernated(Users, Deadline)
            end
    end.

%% The connection processes of group G: the members its room monitors.
users(G) ->
    {monitors, Monitors} = erlang:process_info(msgbench_chat_server:group(G), monitors),
    lists:sort([Pid || {process, Pid} <- Monitors]).

%% The server, owned by a process of its own; on stop its registry is
%% killed, and with it (their link) the owner, the listening socket and the
%% groups' table.
start_server() ->
    Test = self(),
    Owner = spawn(fun() ->
                          {ok, Port} = msgbench_chat_server:start({127, 0, 0, 1}, 0),
                          Test ! {port, Port},
                          receive stop -> ok end  % never sent: it ends by the link
                  end),
    receive {port, Port} -> {Owner, Port} after 5000 -> error(server_did_not_start) end.

stop_server({Owner, _Port}) ->
    Monitor = erlang:monitor(process, Owner),
    exit(whereis(msgbench_chat_registry), kill),
    receive {'DOWN', Monitor, process, Owner, _} -> ok end.

%% A WebSocket client that has joined group 0 as user Number.
join(Port, Number) ->
    {ok, S} = gen_tcp:connect({127, 0, 0, 1}, Port, [binary, {active, false}, {packet, raw}], 5000),
    ok = gen_tcp:send(S, <<"GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n">>),
    <<"HTTP/1.1 101", _/binary>> = response(S, <<>>),
    ok = send_text(S, iolist_to_binary(["{\"join\": {\"group\": 0, \"user\": ", integer_to_binary(Number),
                                        ", \"history\": 4}}"])),
    {text, Joined} = recv_frame(S),
    ?assertEqual({ok, #{<<"joined">> => Number}}, msgbench_json:decode(Joined)),
    S.

response(S, Got) ->
    case binary:match(Got, <<"\r\n\r\n">>) of
        nomatch ->
            {ok, More} = gen_tcp:recv(S, 0, 5000),
            response(S, <<Got/binary, More/binary>>);
        _ ->
            Got
    end.

%% A client's frame: masked (RFC 6455 5.3), here with a zero mask, which
%% leaves the payload as it is; short payloads only.
send_text(S, Payload) when byte_size(Payload) < 126 ->
    gen_tcp:send(S, <<1:1, 0:3, 1:4, 1:1, (byte_size(Payload)):7, 0:32, Payload/binary>>).

recv_frame(S) ->
    {ok, <<1:1, 0:3, Op:4, 0:1, Len:7>>} = gen_tcp:recv(S, 2, 5000),
    true = Len < 126,
    {ok, Payload} = case Len of 0 -> {ok, <<>>}; _ -> gen_tcp:recv(S, Len, 5000) end,
    {case Op of 1 -> text; 2 -> binary end, Payload}.
