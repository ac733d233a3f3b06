-module(msgbench_json_tests).

-include_lib("eunit/include/eunit.hrl").

encode(Term) -> iolist_to_binary(msgbench_json:encode(Term)).

decode(Text) -> msgbench_json:decode(Text).

literals_test() ->
    ?assertEqual(<<"null">>, encode(null)),
    ?assertEqual(<<"true">>, encode(true)),
    ?assertEqual(<<"false">>, encode(false)),
    ?assertEqual({ok, null}, decode(<<"null">>)),
    ?assertEqual({ok, true}, decode(<<" true ">>)),
    ?assertEqual({ok, false}, decode(<<"\nfalse\t">>)).

numbers_test() ->
    ?assertEqual(<<"42">>, encode(42)),
    ?assertEqual(<<"-7">>, encode(-7)),
    ?assertEqual(<<"2.5">>, encode(2.5)),
    ?assertEqual(<<"1.0e20">>, encode(1.0e20)),
    ?assertEqual({ok, 0}, decode(<<"0">>)),
    ?assertEqual({ok, 0}, decode(<<"-0">>)),
    ?assertEqual({ok, 134217727}, decode(<<"134217727">>)),
    ?assertEqual({ok, 123456789012345678901234567890}, decode(<<"123456789012345678901234567890">>)),
    ?assertEqual({ok, -1.5}, decode(<<"-1.5">>)),
    ?assertEqual({ok, 1000.0}, decode(<<"1e3">>)),
    ?assertEqual({ok, 1000.0}, decode(<<"1E+3">>)),
    ?assertEqual({ok, 0.0125}, decode(<<"1.25e-2">>)),
    ?assertEqual({ok, 100.0}, decode(<<"100.0">>)).

bad_numbers_test_() ->
    [?_assertMatch({error, _}, decode(Text))
     || Text <- [<<"01">>, <<"-">>, <<"1.">>, <<".5">>, <<"1e">>, <<"1e+">>, <<"+1">>,
                 <<"1.5e999">>, <<"0x10">>, <<"NaN">>, <<"Infinity">>]].

floats_round_trip_test() ->
    [?assertEqual({ok, F}, decode(encode(F)))
     || F <- [0.1, 1.0 / 3.0, 1.0e-300, 6.02214076e23, -2.0e-5, 4463395.027867206]].

strings_test() ->
    ?assertEqual(<<"\"BOO!\"">>, encode(<<"BOO!">>)),
    ?assertEqual(<<"\"a\\\"b\\\\c\\n\\r\\t\\b\\f\"">>, encode(<<"a\"b\\c\n\r\t\b\f">>)),
    ?assertEqual(<<"\"\\u0001\\u001f\"">>, encode(<<1, 31>>)),
    ?assertEqual(<<"\"message\"">>, encode(message)),
    ?assertEqual({ok, <<"BOO!">>}, decode(<<"\"BOO!\"">>)),
    ?assertEqual({ok, <<"">>}, decode(<<"\"\"">>)),
    ?assertEqual({ok, <<"a\"b\\c/d\n\r\t\b\f">>},
                 decode(<<"\"a\\\"b\\\\c\\/d\\n\\r\\t\\b\\f\"">>)).

unicode_test() ->
    Text = <<"h", 16#e9/utf8, "llo ", 16#20ac/utf8, " ", 16#1F600/utf8>>,
    %% Non-ASCII leaves the encoder as \u escapes, a surrogate pair above U+FFFF.
    ?assertEqual(<<"\"h\\u00e9llo \\u20ac \\ud83d\\ude00\"">>, encode(Text)),
    ?assertEqual({ok, Text}, decode(encode(Text))),
    %% Raw UTF-8 in the input is kept as it is.
    ?assertEqual({ok, Text}, decode(<<$", Text/binary, $">>)),
    ?assertEqual({ok, <<16#e9/utf8>>}, decode(<<"\"\\u00E9\"">>)),
    ?assertEqual({ok, <<16#1F600/utf8>>}, decode(<<"\"\\uD83D\\uDE00\"">>)).

bad_strings_test_() ->
    [?_assertMatch({error, _}, decode(Text))
     || Text <- [<<"\"abc">>, <<"\"a\nb\"">>, <<"\"\\x\"">>, <<"\"\\u12\"">>,
                 <<"\"\\uZZZZ\"">>, <<"\"\\ud83d\"">>, <<"\"\\ude00\"">>,
                 <<"\"\\ud83d\\u0041\"">>, <<$", 16#ff, $">>]].

invalid_utf8_is_not_encoded_test() ->
    ?assertError({invalid_utf8, _}, msgbench_json:encode(<<16#ff>>)).

arrays_test() ->
    ?assertEqual(<<"[]">>, encode([])),
    ?assertEqual(<<"[1,\"a\",[true,null]]">>, encode([1, <<"a">>, [true, null]])),
    ?assertEqual({ok, []}, decode(<<"[ ]">>)),
    ?assertEqual({ok, [1, <<"a">>, [true, null]]}, decode(<<"[1, \"a\" ,[true,null]]">>)),
    ?assertMatch({error, _}, decode(<<"[1,]">>)),
    ?assertMatch({error, _}, decode(<<"[1 2]">>)),
    ?assertMatch({error, _}, decode(<<"[">>)).

objects_test() ->
    ?assertEqual(<<"{}">>, encode(#{})),
    ?assertEqual(<<"{\"a\":1,\"b\":[2]}">>, encode(#{b => [2], <<"a">> => 1})),
    ?assertEqual({ok, #{}}, decode(<<"{ }">>)),
    Request = <<"{\"workload\": \"ring\", \"variant\": \"default\", "
                "\"params\": {\"n\": 1000, \"m\": 10, \"payload\": \"BOO!\"}, \"repetition\": 1}">>,
    ?assertEqual({ok, #{<<"workload">> => <<"ring">>, <<"variant">> => <<"default">>,
                        <<"params">> => #{<<"n">> => 1000, <<"m">> => 10, <<"payload">> => <<"BOO!">>},
                        <<"repetition">> => 1}},
                 decode(Request)),
    ?assertMatch({error, _}, decode(<<"{\"a\" 1}">>)),
    ?assertMatch({error, _}, decode(<<"{\"a\":1,}">>)),
    ?assertMatch({error, _}, decode(<<"{a:1}">>)),
    ?assertMatch({error, _}, decode(<<"{\"a\":1">>)).

whole_text_only_test() ->
    ?assertMatch({error, {trailing_data, _}}, decode(<<"{} {}">>)),
    ?assertMatch({error, _}, decode(<<"">>)),
    ?assertMatch({error, _}, decode(<<"   ">>)).

round_trip_test() ->
    Term = #{<<"type">> => <<"result">>,
             <<"metrics">> => #{<<"hops_per_s">> => 1.5e6, <<"pass_cpu_ms">> => 12},
             <<"verify">> => #{<<"hops">> => 10000, <<"ok">> => true, <<"none">> => null},
             <<"list">> => [[], [#{}], <<"\\">>]},
    ?assertEqual({ok, Term}, decode(encode(Term))).

-dialyzer({nowarn_function, not_json_test/0}).
not_json_test() ->
    ?assertError({not_json, _}, msgbench_json:encode(self())),
    ?assertError({not_json, _}, msgbench_json:encode({a, b})).
