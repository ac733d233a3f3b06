%% The chat server's parts that need no socket: the group's choice of peer
%% and its members leaving, and the command line. The server as a whole is
%% tested over WebSocket by tests/test_chat_server_protocol.py.
-module(msgbench_chat_server_tests).

-include_lib("eunit/include/eunit.hrl").

%% A member of Room that reports what it is delivered and posts on request.
member(Room, Name) ->
    Test = self(),
    Pid = spawn(fun() ->
                        ok = msgbench_chat_room:join(Room, 5000),
                        Test ! {joined, Name},
                        relay(Room, Name, Test)
                end),
    receive {joined, Name} -> Pid end.

relay(Room, Name, Test) ->
    receive
        {post, Payload} ->
            ok = msgbench_chat_room:post(Room, binary, Payload),
            Test ! {posted, Name, Payload};
        {deliver, binary, Payload} -> Test ! {delivered, Name, Payload}
    end,
    relay(Room, Name, Test).

%% Who received each of N posts of From.
receivers(From, N) ->
    [post(From, integer_to_binary(I)) || I <- lists:seq(1, N)],
    [receive {delivered, Name, Payload} -> {Payload, Name} after 5000 -> error(lost) end || _ <- lists:seq(1, N)].

%% Returns once the member has posted (the room has the message).
post(Member, Payload) ->
    Member ! {post, Payload},
    receive {posted, _, Payload} -> ok end.

peers_are_the_senders_others_at_random_test() ->
    Room = msgbench_chat_room:start(),
    [A, _B, _C] = [member(Room, Name) || Name <- [a, b, c]],
    Got = receivers(A, 60),
    ?assertEqual(lists:seq(1, 60), lists:sort([binary_to_integer(P) || {P, _} <- Got])),
    ?assertEqual([b, c], lists:usort([Name || {_, Name} <- Got])).

a_member_that_ends_leaves_the_group_test() ->
    Room = msgbench_chat_room:start(),
    [A, B, C, _D] = [member(Room, Name) || Name <- [a, b, c, d]],
    exit(B, kill),
    exit(A, kill),  % the first place: the last member moves into it
    Got = receivers(C, 40),
    ?assertEqual([d], lists:usort([Name || {_, Name} <- Got])).

a_lone_member_s_messages_are_dropped_test() ->
    Room = msgbench_chat_room:start(),
    A = member(Room, a),
    ok = post(A, <<"alone">>),
    B = member(Room, b),
    ?assertEqual([{<<"1">>, a}], receivers(B, 1)),
    receive {delivered, _, <<"alone">>} -> error(delivered_to_nobody) after 100 -> ok end.

parses_listen_test_() ->
    [?_assertEqual({ok, {0, 0, 0, 0}, 0}, msgbench_chat_server:parse_args(["--listen", "0.0.0.0:0"])),
     ?_assertEqual({ok, {127, 0, 0, 1}, 8080}, msgbench_chat_server:parse_args(["--listen", "127.0.0.1:8080"]))].

refuses_a_bad_listen_naming_it_test_() ->
    [?_assertMatch({error, _}, msgbench_chat_server:parse_args(Args))
     || Args <- [[], ["--listen"], ["--listen", "localhost:80"], ["--listen", "1.2.3.4:70000"],
                 ["--listen", "1.2.3.4"], ["--port", "80"], ["--listen", "1.2.3.4:8x"]]] ++
    [?_assertMatch({match, _}, re:run(element(2, msgbench_chat_server:parse_args(["--listen", "nowhere:1"])),
                                      "--listen nowhere:1: expected HOST:PORT"))].
