%% msgbench_ws: the handshake, frames in (masked, every length encoding,
%% split anywhere), messages reassembled, frames out; RFC 6455's own
%% examples where it gives them. tests/test_chat_server_protocol.py checks
%% the same code against a maintained client.
-module(msgbench_ws_tests).

-include_lib("eunit/include/eunit.hrl").

-define(MAX, 1 bsl 20).

%% A client's frame: masked, as a client must send it.
client_frame(Fin, Opcode, Payload, Mask) ->
    Len = byte_size(Payload),
    Length = if Len < 126 -> <<1:1, Len:7>>;
                Len < 65536 -> <<1:1, 126:7, Len:16>>;
                true -> <<1:1, 127:7, Len:64>>
             end,
    Masked = crypto:exor(Payload, binary:part(binary:copy(Mask, Len div 4 + 1), 0, Len)),
    <<Fin:1, 0:3, Opcode:4, Length/binary, Mask/binary, Masked/binary>>.

client_frame(Opcode, Payload) ->
    client_frame(1, Opcode, Payload, <<16#37, 16#fa, 16#21, 16#3d>>).

accept_key_is_the_rfcs_example_test() ->
    ?assertEqual(<<"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=">>, msgbench_ws:accept_key(<<"dGhlIHNhbXBsZSBub25jZQ==">>)).

%% RFC 6455 5.7: a masked "Hello".
decodes_the_rfcs_masked_hello_test() ->
    Frame = <<16#81, 16#85, 16#37, 16#fa, 16#21, 16#3d, 16#7f, 16#9f, 16#4d, 16#51, 16#58>>,
    ?assertEqual({ok, {frame, true, text, <<"Hello">>}, <<>>}, msgbench_ws:decode(Frame, ?MAX)).

%% 7-, 16- and 64-bit lengths at their edges, and payloads that end on
%% every offset of the 8-byte unmasking.
decodes_every_length_test_() ->
    [?_assertEqual({ok, {frame, true, binary, Payload}, <<"next">>},
                   msgbench_ws:decode(<<(client_frame(2, Payload))/binary, "next">>, ?MAX))
     || Len <- [0, 1, 3, 7, 8, 9, 15, 125, 126, 127, 65535, 65536, 70001],
        Payload <- [list_to_binary([X rem 251 || X <- lists:seq(1, Len)])]].

%% Bytes arrive in any pieces: every prefix of a frame asks for more.
a_frame_cut_anywhere_needs_more_test() ->
    Frame = client_frame(1, binary:copy(<<"abc">>, 100)),
    [?assertEqual(more, msgbench_ws:decode(binary:part(Frame, 0, Cut), ?MAX)) || Cut <- lists:seq(0, byte_size(Frame) - 1)],
    ?assertMatch({ok, {frame, true, text, _}, <<>>}, msgbench_ws:decode(Frame, ?MAX)).

refuses_what_a_client_may_not_send_test_() ->
    Unmasked = <<16#81, 5, "Hello">>,
    Reserved = <<16#C1, 16#80, 0, 0, 0, 0>>,
    UnknownOpcode = client_frame(3, <<>>),
    LongPing = client_frame(9, binary:copy(<<"x">>, 126)),
    FragmentedPing = client_frame(0, 9, <<"x">>, <<1, 2, 3, 4>>),
    [?_assertMatch({error, {1002, _}}, msgbench_ws:decode(Unmasked, ?MAX)),
     ?_assertMatch({error, {1002, _}}, msgbench_ws:decode(Reserved, ?MAX)),
     ?_assertMatch({error, {1002, _}}, msgbench_ws:decode(UnknownOpcode, ?MAX)),
     ?_assertMatch({error, {1002, _}}, msgbench_ws:decode(LongPing, ?MAX)),
     ?_assertMatch({error, {1002, _}}, msgbench_ws:decode(FragmentedPing, ?MAX))].

%% Too large a frame is refused from its header, before its payload arrives.
refuses_a_frame_over_the_limit_from_its_header_test() ->
    Header = binary:part(client_frame(2, binary:copy(<<"x">>, 2000)), 0, 8),
    ?assertMatch({error, {1009, _}}, msgbench_ws:decode(Header, 1000)).

decode_all(Bytes, Partial) ->
    case msgbench_ws:decode(Bytes, ?MAX) of
        more -> [];
        {ok, Frame, Rest} ->
            case msgbench_ws:assemble(Frame, Partial) of
                {message, Opcode, Payload, Next} -> [{Opcode, Payload} | decode_all(Rest, Next)];
                {control, Control, Payload, Next} -> [{Control, Payload} | decode_all(Rest, Next)];
                {more, Next} -> decode_all(Rest, Next);
                {error, _} = Error -> [Error]
            end
    end.

%% A fragmented message comes out whole; a ping between its fragments is
%% answered at once, as RFC 6455 5.4 allows.
reassembles_fragments_around_a_ping_test() ->
    Mask = <<9, 8, 7, 6>>,
    Bytes = <<(client_frame(0, 1, <<"Hel">>, Mask))/binary, (client_frame(1, 9, <<"p">>, Mask))/binary,
              (client_frame(0, 0, <<"lo, ">>, Mask))/binary, (client_frame(1, 0, <<"world">>, Mask))/binary,
              (client_frame(2, <<1, 2>>))/binary>>,
    ?assertEqual([{ping, <<"p">>}, {text, <<"Hello, world">>}, {binary, <<1, 2>>}], decode_all(Bytes, none)).

refuses_continuations_out_of_place_test_() ->
    Mask = <<1, 2, 3, 4>>,
    [?_assertMatch([{error, {1002, _}}], decode_all(client_frame(1, 0, <<"x">>, Mask), none)),
     ?_assertMatch([{error, {1002, _}}],
                   decode_all(<<(client_frame(0, 1, <<"a">>, Mask))/binary, (client_frame(2, <<"b">>))/binary>>,
                              none))].

%% Server frames: unmasked, the shortest length encoding (RFC 6455 5.2, 5.7).
encodes_unmasked_frames_test_() ->
    [?_assertEqual(<<16#81, 16#05, "Hello">>, iolist_to_binary(msgbench_ws:encode(text, <<"Hello">>))),
     ?_assertEqual(<<16#82, 125>>, header(msgbench_ws:encode(binary, binary:copy(<<"x">>, 125)), 2)),
     ?_assertEqual(<<16#82, 126, 126:16>>, header(msgbench_ws:encode(binary, binary:copy(<<"x">>, 126)), 4)),
     ?_assertEqual(<<16#82, 126, 65535:16>>, header(msgbench_ws:encode(binary, binary:copy(<<"x">>, 65535)), 4)),
     ?_assertEqual(<<16#82, 127, 65536:64>>, header(msgbench_ws:encode(binary, binary:copy(<<"x">>, 65536)), 10)),
     ?_assertEqual(<<16#8A, 0>>, iolist_to_binary(msgbench_ws:encode(pong, <<>>)))].

header(Frame, Size) ->
    binary:part(iolist_to_binary(Frame), 0, Size).

close_frame_fits_a_control_frame_test() ->
    <<16#88, Len, 1008:16, Reason/binary>> = iolist_to_binary(msgbench_ws:close_frame(1008, binary:copy(<<"r">>, 500))),
    ?assertEqual(125, Len),
    ?assertEqual(123, byte_size(Reason)).

%% The handshake, over a real socket.
upgrade(Request) ->
    {ok, Listen} = gen_tcp:listen(0, [binary, {packet, http_bin}, {active, false}, {ip, {127, 0, 0, 1}}]),
    {ok, Port} = inet:port(Listen),
    {ok, Client} = gen_tcp:connect({127, 0, 0, 1}, Port, [binary, {active, false}]),
    {ok, Server} = gen_tcp:accept(Listen, 5000),
    ok = gen_tcp:send(Client, Request),
    Outcome = msgbench_ws:upgrade(Server, 5000),
    {ok, Answer} = gen_tcp:recv(Client, 0, 5000),
    [gen_tcp:close(S) || S <- [Client, Server, Listen]],
    {Outcome, Answer}.

upgrades_a_websocket_request_test() ->
    {Outcome, Answer} = upgrade(<<"GET /chat?x=1 HTTP/1.1\r\nHost: h\r\nUpgrade: WebSocket\r\n"
                                  "Connection: keep-alive, Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                                  "Sec-WebSocket-Version: 13\r\n\r\n">>),
    ?assertEqual(ok, Outcome),
    ?assertMatch({match, _}, re:run(Answer, "^HTTP/1.1 101 ")),
    ?assertMatch({match, _}, re:run(Answer, "\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK\\+xOo=\r\n")).

refuses_a_plain_http_request_test() ->
    {Outcome, Answer} = upgrade(<<"GET / HTTP/1.1\r\nHost: h\r\n\r\n">>),
    ?assertMatch({error, {not_a_websocket_upgrade, _}}, Outcome),
    ?assertMatch({match, _}, re:run(Answer, "^HTTP/1.1 400 ")).
