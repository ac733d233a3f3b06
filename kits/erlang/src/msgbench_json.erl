%% A small, strict JSON (RFC 8259) encoder and decoder.
%%
%% OTP 25 has no json module, and the worker protocol needs only a little
%% of JSON, so this stays small:
%%
%%   JSON       Erlang
%%   object     map with binary keys (atom keys are accepted when encoding)
%%   array      list
%%   string     UTF-8 binary (atoms other than true/false/null encode as strings)
%%   number     integer, or float when it has a fraction or an exponent
%%   true/false/null  the atoms true, false, null
%%
%% The encoder writes ASCII only (every other character as \uXXXX), so its
%% output is the same bytes whatever encoding the output device is set to.
-module(msgbench_json).

-export([encode/1, decode/1]).

-export_type([json/0]).

-type json() :: null | boolean() | number() | binary() | atom()
              | [json()] | #{binary() | atom() => json()}.

%%====================================================================
%% Encoding
%%====================================================================

%% Encodes a term as one line of JSON (no newline). Raises
%% error({not_json, Term}) for terms JSON cannot express.
-spec encode(json()) -> iodata().
encode(null) -> <<"null">>;
encode(true) -> <<"true">>;
encode(false) -> <<"false">>;
encode(Int) when is_integer(Int) -> integer_to_binary(Int);
encode(Float) when is_float(Float) -> float_to_binary(Float, [short]);
encode(Atom) when is_atom(Atom) -> encode_string(atom_to_binary(Atom, utf8));
encode(Bin) when is_binary(Bin) -> encode_string(Bin);
encode(List) when is_list(List) -> [$[, join([encode(Item) || Item <- List]), $]];
encode(Map) when is_map(Map) ->
    %% Sorted keys: the same map always gives the same bytes.
    Members = [[encode_string(Key), $:, encode(Value)]
               || {Key, Value} <- lists:sort([{key_text(Key), Value}
                                              || {Key, Value} <- maps:to_list(Map)])],
    [${, join(Members), $}];
encode(Other) -> error({not_json, Other}).

key_text(Key) when is_binary(Key) -> Key;
key_text(Key) when is_atom(Key) -> atom_to_binary(Key, utf8);
key_text(Key) -> error({not_json_key, Key}).

join([]) -> [];
join([First | Rest]) -> [First | [[$, | Item] || Item <- Rest]].

encode_string(Bin) ->
    case unicode:characters_to_list(Bin, utf8) of
        Chars when is_list(Chars) -> [$", [escape_char(C) || C <- Chars], $"];
        _ -> error({invalid_utf8, Bin})
    end.

escape_char($") -> <<"\\\"">>;
escape_char($\\) -> <<"\\\\">>;
escape_char($\n) -> <<"\\n">>;
escape_char($\r) -> <<"\\r">>;
escape_char($\t) -> <<"\\t">>;
escape_char($\b) -> <<"\\b">>;
escape_char($\f) -> <<"\\f">>;
escape_char(C) when C >= 16#20, C < 16#7F -> C;
escape_char(C) when C =< 16#FFFF -> unicode_escape(C);
escape_char(C) ->
    %% Outside the Basic Multilingual Plane: a UTF-16 surrogate pair.
    Offset = C - 16#10000,
    [unicode_escape(16#D800 bor (Offset bsr 10)),
     unicode_escape(16#DC00 bor (Offset band 16#3FF))].

unicode_escape(Code) ->
    Hex = string:to_lower(integer_to_list(Code, 16)),
    [<<"\\u">>, lists:duplicate(4 - length(Hex), $0), Hex].

%%====================================================================
%% Decoding
%%====================================================================

%% Decodes one JSON text; only whitespace may follow it.
-spec decode(binary()) -> {ok, json()} | {error, term()}.
decode(Bin) when is_binary(Bin) ->
    try value(skip_ws(Bin)) of
        {Value, Rest} ->
            case skip_ws(Rest) of
                <<>> -> {ok, Value};
                Trailing -> {error, {trailing_data, excerpt(Trailing)}}
            end
    catch
        throw:{json_error, Reason} -> {error, Reason}
    end.

-spec fail(term()) -> no_return().
fail(Reason) -> throw({json_error, Reason}).

excerpt(Bin) -> binary:part(Bin, 0, min(byte_size(Bin), 20)).

skip_ws(<<C, Rest/binary>>) when C =:= $\s; C =:= $\t; C =:= $\n; C =:= $\r ->
    skip_ws(Rest);
skip_ws(Bin) -> Bin.

value(<<${, Rest/binary>>) -> object(skip_ws(Rest), #{});
value(<<$[, Rest/binary>>) -> array(skip_ws(Rest), []);
value(<<$", Rest/binary>>) -> string(Rest, []);
value(<<"true", Rest/binary>>) -> {true, Rest};
value(<<"false", Rest/binary>>) -> {false, Rest};
value(<<"null", Rest/binary>>) -> {null, Rest};
value(<<C, _/binary>> = Bin) when C =:= $-; C >= $0, C =< $9 -> number(Bin);
value(<<>>) -> fail(unexpected_end);
value(Bin) -> fail({unexpected, excerpt(Bin)}).

object(<<$}, Rest/binary>>, Acc) when map_size(Acc) =:= 0 -> {Acc, Rest};
object(<<$", Rest/binary>>, Acc) ->
    {Key, AfterKey} = string(Rest, []),
    case skip_ws(AfterKey) of
        <<$:, AfterColon/binary>> ->
            {Value, AfterValue} = value(skip_ws(AfterColon)),
            Members = Acc#{Key => Value},
            case skip_ws(AfterValue) of
                <<$,, Next/binary>> -> object(skip_ws(Next), Members);
                <<$}, Next/binary>> -> {Members, Next};
                Other -> fail({expected_comma_or_brace, excerpt(Other)})
            end;
        Other ->
            fail({expected_colon, excerpt(Other)})
    end;
object(Other, _Acc) -> fail({expected_key, excerpt(Other)}).

array(<<$], Rest/binary>>, []) -> {[], Rest};
array(Bin, Acc) ->
    {Value, AfterValue} = value(Bin),
    case skip_ws(AfterValue) of
        <<$,, Next/binary>> -> array(skip_ws(Next), [Value | Acc]);
        <<$], Next/binary>> -> {lists:reverse(Acc, [Value]), Next};
        Other -> fail({expected_comma_or_bracket, excerpt(Other)})
    end.

%% Strings: copy runs of plain bytes in one piece, decode escapes one by one.
string(Bin, Acc) ->
    Plain = plain_run_length(Bin, 0),
    <<Run:Plain/binary, Rest/binary>> = Bin,
    case Rest of
        <<$", After/binary>> ->
            {valid_utf8(iolist_to_binary([Acc, Run])), After};
        <<$\\, Escaped/binary>> ->
            {Char, After} = escape(Escaped),
            string(After, [Acc, Run, Char]);
        <<>> ->
            fail(unterminated_string);
        <<C, _/binary>> ->
            fail({control_character_in_string, C})
    end.

plain_run_length(Bin, N) ->
    case Bin of
        <<_:N/binary, C, _/binary>> when C =/= $", C =/= $\\, C >= 16#20 ->
            plain_run_length(Bin, N + 1);
        _ ->
            N
    end.

valid_utf8(Bin) ->
    case unicode:characters_to_binary(Bin, utf8, utf8) of
        Bin -> Bin;
        _ -> fail({invalid_utf8, excerpt(Bin)})
    end.

escape(<<$", Rest/binary>>) -> {<<$">>, Rest};
escape(<<$\\, Rest/binary>>) -> {<<$\\>>, Rest};
escape(<<$/, Rest/binary>>) -> {<<$/>>, Rest};
escape(<<$b, Rest/binary>>) -> {<<$\b>>, Rest};
escape(<<$f, Rest/binary>>) -> {<<$\f>>, Rest};
escape(<<$n, Rest/binary>>) -> {<<$\n>>, Rest};
escape(<<$r, Rest/binary>>) -> {<<$\r>>, Rest};
escape(<<$t, Rest/binary>>) -> {<<$\t>>, Rest};
escape(<<$u, Hex:4/binary, Rest/binary>>) ->
    case hex(Hex) of
        High when High >= 16#D800, High =< 16#DBFF ->
            %% A high surrogate must be followed by an escaped low surrogate.
            case Rest of
                <<"\\u", LowHex:4/binary, After/binary>> ->
                    case hex(LowHex) of
                        Low when Low >= 16#DC00, Low =< 16#DFFF ->
                            Code = 16#10000 + ((High - 16#D800) bsl 10) + (Low - 16#DC00),
                            {<<Code/utf8>>, After};
                        _ ->
                            fail({lone_surrogate, Hex})
                    end;
                _ ->
                    fail({lone_surrogate, Hex})
            end;
        Low when Low >= 16#DC00, Low =< 16#DFFF ->
            fail({lone_surrogate, Hex});
        Code ->
            {<<Code/utf8>>, Rest}
    end;
escape(Bin) -> fail({bad_escape, excerpt(Bin)}).

hex(Hex) ->
    case [C || <<C>> <= Hex, not is_hex_digit(C)] of
        [] -> binary_to_integer(Hex, 16);
        _ -> fail({bad_unicode_escape, Hex})
    end.

is_hex_digit(C) ->
    (C >= $0 andalso C =< $9) orelse (C >= $a andalso C =< $f)
        orelse (C >= $A andalso C =< $F).

%% number = [ "-" ] int [ frac ] [ exp ], with int = "0" / digit1-9 *digit.
number(Bin) ->
    {Sign, AfterSign} = case Bin of
                            <<$-, R/binary>> -> {<<"-">>, R};
                            _ -> {<<>>, Bin}
                        end,
    {Int, AfterInt} = case AfterSign of
                          <<$0, R0/binary>> -> {<<"0">>, R0};
                          <<D, _/binary>> when D >= $1, D =< $9 -> digits(AfterSign);
                          _ -> fail({bad_number, excerpt(Bin)})
                      end,
    {Frac, AfterFrac} = case AfterInt of
                            <<$., R1/binary>> -> nonempty_digits(R1, Bin);
                            _ -> {none, AfterInt}
                        end,
    {Exp, AfterExp} = case AfterFrac of
                          <<E, R2/binary>> when E =:= $e; E =:= $E -> exponent(R2, Bin);
                          _ -> {none, AfterFrac}
                      end,
    {to_number(Sign, Int, Frac, Exp, Bin), AfterExp}.

exponent(<<S, Rest/binary>>, Whole) when S =:= $+; S =:= $- ->
    {Digits, After} = nonempty_digits(Rest, Whole),
    {<<S, Digits/binary>>, After};
exponent(Bin, Whole) -> nonempty_digits(Bin, Whole).

nonempty_digits(Bin, Whole) ->
    case digits(Bin) of
        {<<>>, _} -> fail({bad_number, excerpt(Whole)});
        Found -> Found
    end.

digits(Bin) -> digits(Bin, 0).

digits(Bin, N) ->
    case Bin of
        <<_:N/binary, D, _/binary>> when D >= $0, D =< $9 -> digits(Bin, N + 1);
        <<Digits:N/binary, Rest/binary>> -> {Digits, Rest}
    end.

to_number(Sign, Int, none, none, _Whole) ->
    binary_to_integer(<<Sign/binary, Int/binary>>);
to_number(Sign, Int, Frac, Exp, Whole) ->
    %% binary_to_float/1 wants both a fraction and, if any, a lower-case "e".
    FracPart = case Frac of none -> <<"0">>; _ -> Frac end,
    ExpPart = case Exp of none -> <<>>; _ -> <<$e, Exp/binary>> end,
    try binary_to_float(<<Sign/binary, Int/binary, $., FracPart/binary, ExpPart/binary>>)
    catch error:badarg -> fail({number_out_of_range, excerpt(Whole)})
    end.
