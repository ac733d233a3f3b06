%% The variant's options as the request carries them (decoded JSON: binary
%% keys and strings, integers, booleans).
-module(msgbench_options_tests).

-include_lib("eunit/include/eunit.hrl").

%% This module is also another target's table of options, of one option, to
%% show that the kit's reader knows no target's options itself.
-behaviour(msgbench_options).
-export([defaults/0, value/2]).

defaults() -> #{depth => 1}.

value(depth, N) when is_integer(N), N >= 1 -> {ok, N};
value(depth, _) -> {error, "an integer >= 1"}.

read(Json) ->
    {ok, Options} = msgbench_json:decode(Json),
    case msgbench_options:read(msgbench_erlang_options, Options) of
        {ok, Read} -> {ok, Read};
        {error, Message} -> {error, iolist_to_binary(Message)}
    end.

%% What the BEAM does when the variant says nothing.
defaults_test() ->
    ?assertEqual({ok, #{message_queue_data => on_heap, yield => false, active => false}},
                 read(<<"{}">>)).

every_variant_of_target_toml_test_() ->
    [?_assertEqual({ok, Expected}, read(Json))
     || {Json, Expected} <-
            [{<<"{\"message_queue_data\": \"off_heap\"}">>,
              #{message_queue_data => off_heap, yield => false, active => false}},
             {<<"{\"message_queue_data\": \"on_heap\"}">>,
              #{message_queue_data => on_heap, yield => false, active => false}},
             {<<"{\"message_queue_data\": \"off_heap\", \"yield\": true}">>,
              #{message_queue_data => off_heap, yield => true, active => false}},
             {<<"{\"active\": \"once\"}">>,
              #{message_queue_data => on_heap, yield => false, active => once}},
             {<<"{\"active\": 100}">>,
              #{message_queue_data => on_heap, yield => false, active => 100}},
             {<<"{\"active\": false, \"yield\": false}">>,
              #{message_queue_data => on_heap, yield => false, active => false}}]].

unknown_options_are_named_test() ->
    ?assertEqual({error, <<"unknown option no_such_option (known here: active, message_queue_data, yield)">>},
                 read(<<"{\"yield\": true, \"no_such_option\": 1}">>)),
    ?assertEqual({error, <<"unknown option a, b (known here: active, message_queue_data, yield)">>},
                 read(<<"{\"b\": 1, \"a\": 2}">>)).

values_of_the_wrong_kind_are_named_test_() ->
    [?_assertMatch({error, <<"option ", _/binary>>}, read(Json))
     || Json <- [<<"{\"message_queue_data\": \"off\"}">>, <<"{\"message_queue_data\": 1}">>,
                 <<"{\"yield\": \"true\"}">>, <<"{\"yield\": 1}">>,
                 <<"{\"active\": true}">>, <<"{\"active\": 0}">>, <<"{\"active\": 1.5}">>,
                 <<"{\"active\": \"twice\"}">>]].

options_must_be_an_object_test() ->
    ?assertMatch({error, <<"options must be an object", _/binary>>}, read(<<"[]">>)).

%% The kit's reader names the option, the value and what the target's table
%% accepts.
a_wrong_value_says_what_is_accepted_test() ->
    ?assertEqual({error, <<"option active = 0: expected false, \"once\" or an integer >= 1">>},
                 read(<<"{\"active\": 0}">>)).

another_targets_table_test() ->
    Read = fun(Options) ->
                   case msgbench_options:read(?MODULE, Options) of
                       {error, Message} -> {error, iolist_to_binary(Message)};
                       Ok -> Ok
                   end
           end,
    ?assertEqual({ok, #{depth => 1}}, Read(#{})),
    ?assertEqual({ok, #{depth => 3}}, Read(#{<<"depth">> => 3})),
    ?assertEqual({error, <<"option depth = 0: expected an integer >= 1">>}, Read(#{<<"depth">> => 0})),
    ?assertEqual({error, <<"unknown option yield (known here: depth)">>}, Read(#{<<"yield">> => true})).
