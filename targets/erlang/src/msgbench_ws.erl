%% WebSocket (RFC 6455), the server's side, written once and small: Erlang/OTP
%% has no WebSocket library and Hex is not reachable here. Tested by EUnit
%% (test/msgbench_ws_tests.erl) and against a maintained client, Python
%% websockets (tests/test_chat_server_protocol.py).
%%
%% - upgrade/2: the HTTP/1.1 handshake on a socket in {packet, http_bin}
%%   mode, which OTP's own HTTP parser reads; the socket is then switched
%%   to {packet, raw}.
%% - decode/2: one frame from the bytes read so far (masked, as every client
%%   frame must be; 7-, 16- and 64-bit lengths).
%% - assemble/2: frames to messages: continuation frames are reassembled,
%%   control frames (close, ping, pong) pass between fragments.
%% - encode/2, close_frame/2: server frames, unmasked.
%%
%% Text payloads are not checked for UTF-8: the chat server passes them on
%% verbatim and never reads them (docs/chat-server.md), and checking every
%% message would put a cost on the measured path no client needs.
-module(msgbench_ws).

-export([upgrade/2, accept_key/1, decode/2, assemble/2, encode/2, close_frame/2]).

-export_type([opcode/0, frame/0, partial/0]).

-type opcode() :: text | binary | continuation | close | ping | pong.
-type frame() :: {frame, Fin :: boolean(), opcode(), Payload :: binary()}.
%% A message being reassembled: its opcode and its fragments so far, newest
%% first, and their total size.
-type partial() :: none | {text | binary, [binary()], non_neg_integer()}.

-define(GUID, <<"258EAFA5-E914-47DA-95CA-C5AB0DC85B11">>).
-define(MAX_HEADERS, 100).

%% The handshake: the client's GET with Upgrade: websocket, Connection:
%% upgrade, Sec-WebSocket-Version: 13 and a Sec-WebSocket-Key, answered by
%% 101 Switching Protocols (any path is accepted). A request that is not
%% one gets 400 and {error, Reason}. The socket must be passive, in
%% {packet, http_bin} mode; on ok it is left in {packet, raw}.
-spec upgrade(gen_tcp:socket(), timeout()) -> ok | {error, term()}.
upgrade(Socket, Timeout) ->
    case gen_tcp:recv(Socket, 0, Timeout) of
        {ok, {http_request, 'GET', _Path, {1, 1}}} ->
            case headers(Socket, Timeout, #{}, 0) of
                {ok, Headers} -> answer(Socket, Headers);
                {error, _} = Error -> Error
            end;
        {ok, Other} ->
            refuse(Socket, {not_a_get, Other});
        {error, _} = Error ->
            Error
    end.

headers(_Socket, _Timeout, _Found, Count) when Count > ?MAX_HEADERS ->
    {error, too_many_headers};
headers(Socket, Timeout, Found, Count) ->
    case gen_tcp:recv(Socket, 0, Timeout) of
        {ok, {http_header, _, Name, _, Value}} ->
            headers(Socket, Timeout, Found#{header_name(Name) => Value}, Count + 1);
        {ok, http_eoh} ->
            {ok, Found};
        {ok, Other} ->
            refuse(Socket, {bad_header, Other});
        {error, _} = Error ->
            Error
    end.

%% The parser gives well-known names as atoms ('Connection', 'Upgrade') and
%% the others as binaries as sent; compare them in lower case.
header_name(Name) when is_atom(Name) -> string:lowercase(atom_to_binary(Name));
header_name(Name) -> string:lowercase(Name).

answer(Socket, Headers) ->
    Upgrade = string:lowercase(maps:get(<<"upgrade">>, Headers, <<>>)),
    Connection = [string:trim(T) || T <- string:split(string:lowercase(maps:get(<<"connection">>, Headers, <<>>)),
                                                     <<",">>, all)],
    case {Upgrade, lists:member(<<"upgrade">>, Connection), maps:find(<<"sec-websocket-version">>, Headers),
          maps:find(<<"sec-websocket-key">>, Headers)} of
        {<<"websocket">>, true, {ok, <<"13">>}, {ok, Key}} ->
            Response = [<<"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          "Sec-WebSocket-Accept: ">>, accept_key(Key), <<"\r\n\r\n">>],
            case gen_tcp:send(Socket, Response) of
                ok -> inet:setopts(Socket, [{packet, raw}]);
                {error, _} = Error -> Error
            end;
        _ ->
            refuse(Socket, {not_a_websocket_upgrade, Headers})
    end.

refuse(Socket, Reason) ->
    _ = gen_tcp:send(Socket, <<"HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n">>),
    {error, Reason}.

%% Sec-WebSocket-Accept: base64(sha1(key ++ GUID)) (RFC 6455 4.2.2).
-spec accept_key(binary()) -> binary().
accept_key(Key) ->
    base64:encode(crypto:hash(sha, [string:trim(Key), ?GUID])).

%% One frame from Buffer, or more (the frame is not all there yet), or an
%% error naming the close status it calls for. Frames larger than Max bytes
%% are refused as soon as their header says so.
-spec decode(binary(), pos_integer()) ->
    {ok, frame(), Rest :: binary()} | more | {error, {1002 | 1003 | 1009, binary()}}.
decode(<<Fin:1, 0:3, Op:4, 1:1, Len7:7, Rest/binary>>, Max) ->
    case opcode(Op) of
        error ->
            {error, {1002, iolist_to_binary(io_lib:format("unknown opcode ~b", [Op]))}};
        _Control when Op >= 8, (Fin =:= 0 orelse Len7 > 125) ->
            {error, {1002, <<"a control frame must be whole and at most 125 bytes">>}};
        Opcode ->
            payload(Fin =:= 1, Opcode, Len7, Rest, Max)
    end;
decode(<<_:1, 0:3, _:4, 0:1, _/bitstring>>, _Max) ->
    {error, {1002, <<"a client's frames must be masked">>}};
decode(<<_:1, Reserved:3, _/bitstring>>, _Max) when Reserved =/= 0 ->
    {error, {1002, <<"reserved bits set, and no extension was agreed">>}};
decode(_Partial, _Max) ->
    more.

payload(Fin, Opcode, 126, <<Len:16, Rest/binary>>, Max) -> masked(Fin, Opcode, Len, Rest, Max);
payload(Fin, Opcode, 127, <<0:1, Len:63, Rest/binary>>, Max) -> masked(Fin, Opcode, Len, Rest, Max);
payload(_Fin, _Opcode, 127, <<1:1, _/bitstring>>, _Max) -> {error, {1002, <<"64-bit length with its top bit set">>}};
payload(_Fin, _Opcode, Len7, _Short, _Max) when Len7 >= 126 -> more;
payload(Fin, Opcode, Len, Rest, Max) -> masked(Fin, Opcode, Len, Rest, Max).

masked(_Fin, _Opcode, Len, _Rest, Max) when Len > Max ->
    {error, {1009, iolist_to_binary(io_lib:format("a frame of ~b bytes, more than ~b", [Len, Max]))}};
masked(Fin, Opcode, Len, Bytes, _Max) ->
    case Bytes of
        <<Mask:4/binary, Payload:Len/binary, Rest/binary>> -> {ok, {frame, Fin, Opcode, unmask(Payload, Mask)}, Rest};
        _Short -> more
    end.

opcode(0) -> continuation;
opcode(1) -> text;
opcode(2) -> binary;
opcode(8) -> close;
opcode(9) -> ping;
opcode(10) -> pong;
opcode(_) -> error.

code(continuation) -> 0;
code(text) -> 1;
code(binary) -> 2;
code(close) -> 8;
code(ping) -> 9;
code(pong) -> 10.

%% XOR with the 4-byte mask repeated: 8 bytes at a time, then the tail.
unmask(Payload, <<M:32>>) ->
    unmask(Payload, (M bsl 32) bor M, []).

unmask(<<Word:64, Rest/binary>>, M64, Acc) ->
    unmask(Rest, M64, [<<(Word bxor M64):64>> | Acc]);
unmask(Tail, M64, Acc) ->
    Bits = bit_size(Tail),
    <<MaskBits:Bits, _/bitstring>> = <<M64:64>>,
    <<T:Bits>> = Tail,
    iolist_to_binary(lists:reverse(Acc, [<<(T bxor MaskBits):Bits>>])).

%% A frame joined to the message it belongs to: a whole message, a control
%% frame to act on (between fragments too), or more fragments to wait for.
-spec assemble(frame(), partial()) ->
    {message, text | binary, binary(), partial()} | {control, close | ping | pong, binary(), partial()}
    | {more, partial()} | {error, {1002, binary()}}.
assemble({frame, true, Control, Payload}, Partial) when Control =:= close; Control =:= ping; Control =:= pong ->
    {control, Control, Payload, Partial};
assemble({frame, true, Data, Payload}, none) when Data =:= text; Data =:= binary ->
    {message, Data, Payload, none};
assemble({frame, false, Data, Payload}, none) when Data =:= text; Data =:= binary ->
    {more, {Data, [Payload], byte_size(Payload)}};
assemble({frame, Fin, continuation, Payload}, {Data, Fragments, Size}) ->
    case Fin of
        true -> {message, Data, iolist_to_binary(lists:reverse(Fragments, [Payload])), none};
        false -> {more, {Data, [Payload | Fragments], Size + byte_size(Payload)}}
    end;
assemble({frame, _Fin, continuation, _Payload}, none) ->
    {error, {1002, <<"a continuation frame with no message to continue">>}};
assemble({frame, _Fin, _Data, _Payload}, {_, _, _}) ->
    {error, {1002, <<"a new message before the fragmented one ended">>}}.

%% A server frame, whole and unmasked.
-spec encode(opcode(), iodata()) -> iodata().
encode(Opcode, Payload) ->
    Len = iolist_size(Payload),
    First = 16#80 bor code(Opcode),  % FIN, no reserved bits
    Header = if
                 Len < 126 -> <<First, Len>>;  % and no mask bit: a server's frames are not masked
                 Len < 65536 -> <<First, 126, Len:16>>;
                 true -> <<First, 127, Len:64>>
             end,
    [Header, Payload].

%% A close frame with a status code and a reason (cut to fit 125 bytes).
-spec close_frame(1000..4999, iodata()) -> iodata().
close_frame(Status, Reason) ->
    Text = iolist_to_binary(Reason),
    Cut = binary:part(Text, 0, min(byte_size(Text), 123)),
    encode(close, <<Status:16, Cut/binary>>).
