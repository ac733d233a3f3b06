%% Validation against the real workload specs in spec/workloads/.
-module(msgbench_params_tests).

-include_lib("eunit/include/eunit.hrl").

schemas(Workload) ->
    {ok, #{<<"params">> := Schemas}} = msgbench_spec:workload(Workload),
    Schemas.

ring(Params) ->
    msgbench_params:validate(<<"ring">>, schemas(<<"ring">>), Params).

fanin(Params) ->
    msgbench_params:validate(<<"fanin">>, schemas(<<"fanin">>), Params).

ring_defaults() -> #{<<"n">> => 1000, <<"m">> => 10, <<"payload">> => <<"BOO!">>}.

message_mix(Size) -> [#{<<"percent">> => 100, <<"kind">> => <<"message">>, <<"size">> => Size}].

fanin_defaults() ->
    #{<<"senders">> => 1, <<"duration_ms">> => 1000, <<"mix">> => message_mix(1),
      <<"method">> => <<"msgbench">>, <<"memory_limit_mb">> => 8192}.

valid_ring_test() ->
    ?assertEqual({ok, ring_defaults()}, ring(ring_defaults())).

missing_params_take_the_spec_defaults_test() ->
    ?assertEqual({ok, ring_defaults()}, ring(#{})),
    ?assertEqual({ok, fanin_defaults()}, fanin(#{})).

out_of_range_names_param_value_and_range_test() ->
    ?assertEqual({error, <<"n = 1 is out of range: n must be an integer >= 2 and <= 134217727">>},
                 ring(#{<<"n">> => 1})),
    ?assertEqual({error, <<"m = 0 is out of range: m must be an integer >= 1 and <= 1000000000">>},
                 ring(#{<<"m">> => 0})),
    ?assertEqual({error, <<"senders = 100001 is out of range: senders must be an integer "
                           ">= 1 and <= 100000">>},
                 fanin(#{<<"senders">> => 100001})).

wrong_type_test() ->
    ?assertEqual({error, <<"n = \"ten\" is not an integer: n must be an integer >= 2 and <= 134217727">>},
                 ring(#{<<"n">> => <<"ten">>})),
    ?assertEqual({error, <<"n = 2.5 is not an integer: n must be an integer >= 2 and <= 134217727">>},
                 ring(#{<<"n">> => 2.5})),
    ?assertEqual({error, <<"payload = 4 is not a string: payload must be a string of 0 to 65536 characters">>},
                 ring(#{<<"payload">> => 4})).

integral_floats_are_integers_test() ->
    ?assertEqual({ok, (ring_defaults())#{<<"n">> => 20}}, ring(#{<<"n">> => 20.0})).

payload_length_counts_characters_test() ->
    Long = binary:copy(<<16#e9/utf8>>, 65536),
    ?assertMatch({ok, #{<<"payload">> := Long}}, ring(#{<<"payload">> => Long})),
    ?assertMatch({error, <<"payload = \"", _/binary>>},
                 ring(#{<<"payload">> => <<Long/binary, "x">>})).

unknown_param_test() ->
    ?assertEqual({error, <<"unknown parameter laps = 3: ring takes only m, n, payload">>},
                 ring(#{<<"laps">> => 3})).

enum_test() ->
    ?assertEqual({error, <<"method = \"fast\" is not accepted: method must be one of "
                           "\"msgbench\", \"otp\"">>},
                 fanin(#{<<"method">> => <<"fast">>})).

mix_test() ->
    ?assertMatch({ok, _}, fanin(#{<<"mix">> => [#{<<"percent">> => 50, <<"kind">> => <<"exit_signal">>,
                                                  <<"size">> => 10},
                                                #{<<"percent">> => 50, <<"kind">> => <<"message">>,
                                                  <<"size">> => 10}]})),
    ?assertEqual({error, <<"mix = [] is out of range: mix must be an array of 1 to 8 items">>},
                 fanin(#{<<"mix">> => []})),
    ?assertEqual({error, <<"mix[0].size = 0 is out of range: mix[0].size must be an integer "
                           ">= 1 and <= 1000000">>},
                 fanin(#{<<"mix">> => message_mix(0)})),
    ?assertEqual({error, <<"mix[0].percent = 0 is out of range: mix[0].percent must be a number "
                           "> 0 and <= 100">>},
                 fanin(#{<<"mix">> => [#{<<"percent">> => 0, <<"kind">> => <<"message">>,
                                         <<"size">> => 1}]})),
    ?assertEqual({error, <<"mix[0].kind = \"link\" is not accepted: mix[0].kind must be one of "
                           "\"message\", \"exit_signal\"">>},
                 fanin(#{<<"mix">> => [#{<<"percent">> => 100, <<"kind">> => <<"link">>,
                                         <<"size">> => 1}]})),
    ?assertEqual({error, <<"mix[0].size is missing: mix[0] must be an object with percent, kind, size">>},
                 fanin(#{<<"mix">> => [#{<<"percent">> => 100, <<"kind">> => <<"message">>}]})),
    ?assertMatch({error, <<"unknown field mix[0].colour = \"red\"", _/binary>>},
                 fanin(#{<<"mix">> => [(hd(message_mix(1)))#{<<"colour">> => <<"red">>}]})).

params_must_be_an_object_test() ->
    ?assertEqual({error, <<"params = [1] is not an object">>},
                 msgbench_params:validate(<<"ring">>, schemas(<<"ring">>), [1])).

long_values_are_cut_short_test() ->
    Described = msgbench_params:describe_value(binary:copy(<<"x">>, 1000)),
    ?assertEqual(60, byte_size(Described)),
    ?assertMatch(<<"\"xxx", _/binary>>, Described).

chat(Params) ->
    msgbench_params:validate(<<"chat">>, schemas(<<"chat">>), Params).

chat_defaults() ->
    #{<<"groups">> => 10, <<"clients_per_group">> => 5, <<"duration_s">> => 10,
      <<"think_ms">> => 0, <<"listener_delay_ms">> => 0, <<"message">> => <<"text">>,
      <<"history">> => 10, <<"drain_timeout_s">> => 30}.

chat_test() ->
    ?assertEqual({ok, chat_defaults()}, chat(#{})),
    ?assertMatch({ok, #{<<"duration_s">> := 0.25, <<"drain_timeout_s">> := 0}},
                 chat(#{<<"duration_s">> => 0.25, <<"drain_timeout_s">> => 0})),
    ?assertEqual({error, <<"duration_s = 0 is out of range: duration_s must be a number > 0 "
                           "and <= 86400">>},
                 chat(#{<<"duration_s">> => 0})),
    ?assertEqual({error, <<"clients_per_group = 1 is out of range: clients_per_group must be "
                           "an integer >= 2 and <= 100000">>},
                 chat(#{<<"clients_per_group">> => 1})),
    ?assertEqual({error, <<"groups = 1000001 is out of range: groups must be an integer >= 1 "
                           "and <= 1000000">>},
                 chat(#{<<"groups">> => 1000001})),
    ?assertEqual({error, <<"think_ms = 1.5 is not an integer: think_ms must be an integer >= 0 "
                           "and <= 3600000">>},
                 chat(#{<<"think_ms">> => 1.5})),
    ?assertEqual({error, <<"listener_delay_ms = 1001 is out of range: listener_delay_ms must be "
                           "an integer >= 0 and <= 1000">>},
                 chat(#{<<"listener_delay_ms">> => 1001})),
    ?assertEqual({error, <<"message = \"xml\" is not accepted: message must be one of \"text\", "
                           "\"binary\"">>},
                 chat(#{<<"message">> => <<"xml">>})),
    ?assertEqual({error, <<"history = -1 is out of range: history must be an integer >= 0 and "
                           "<= 10000">>},
                 chat(#{<<"history">> => -1})),
    ?assertEqual({error, <<"drain_timeout_s = 3601 is out of range: drain_timeout_s must be a "
                           "number >= 0 and <= 3600">>},
                 chat(#{<<"drain_timeout_s">> => 3601})),
    ?assertMatch({error, <<"unknown parameter users = 3: chat takes only clients_per_group, ",
                           _/binary>>},
                 chat(#{<<"users">> => 3})).
