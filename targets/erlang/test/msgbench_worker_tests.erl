%% The protocol, driven in this VM through msgbench_worker:handle/2.
-module(msgbench_worker_tests).

-include_lib("eunit/include/eunit.hrl").

%% The lines the worker would print for one stdin line, decoded again.
lines(Input) ->
    Self = self(),
    Ref = make_ref(),
    ok = msgbench_worker:handle(Input, fun(Line) -> Self ! {Ref, Line}, ok end),
    Lines = collect(Ref),
    [begin {ok, Decoded} = msgbench_json:decode(iolist_to_binary(msgbench_json:encode(Line))),
           Decoded
     end || Line <- Lines].

collect(Ref) ->
    receive {Ref, Line} -> [Line | collect(Ref)] after 0 -> [] end.

request(Workload, Variant, Params) ->
    iolist_to_binary(msgbench_json:encode(#{workload => Workload, variant => Variant,
                                            params => Params, repetition => 1})).

%% hello, then exactly one final line, which is returned.
final(Input) ->
    [Hello, Final] = lines(Input),
    ?assertMatch(#{<<"type">> := <<"hello">>, <<"target">> := <<"erlang">>,
                   <<"runtime_version">> := <<"OTP ", _/binary>>, <<"variant">> := _}, Hello),
    Final.

error_of(Input) ->
    #{<<"type">> := <<"error">>, <<"kind">> := Kind, <<"message">> := Message} = final(Input),
    {Kind, Message}.

ring_result_test() ->
    Final = final(request(ring, default, #{n => 100, m => 3, payload => <<"BOO!">>})),
    ?assertMatch(#{<<"type">> := <<"result">>,
                   <<"verify">> := #{<<"hops">> := 300, <<"laps">> := 3, <<"links">> := 100}},
                 Final),
    #{<<"metrics">> := Metrics} = Final,
    ?assertEqual(lists:sort([<<"create_wall_ms">>, <<"create_cpu_ms">>, <<"pass_wall_ms">>,
                             <<"pass_cpu_ms">>, <<"hops_per_s">>, <<"spawns_per_s">>,
                             <<"peak_rss_bytes">>]),
                 lists:sort(maps:keys(Metrics))),
    ?assert(maps:get(<<"peak_rss_bytes">>, Metrics) > 1000000).

hello_names_the_requested_variant_test() ->
    [Hello, _] = lines(request(ring, default, #{n => 10, m => 1})),
    ?assertMatch(#{<<"variant">> := <<"default">>}, Hello).

fanin_metrics(Method, Mix) ->
    Final = final(request(fanin, default, #{senders => 2, duration_ms => 30, mix => Mix,
                                            method => Method, memory_limit_mb => 8192})),
    ?assertMatch(#{<<"type">> := <<"result">>}, Final),
    #{<<"metrics">> := Metrics, <<"verify">> := Verify} = Final,
    ?assertEqual(lists:sort([<<"send_throughput_per_s">>, <<"receive_throughput_per_s">>,
                             <<"send_duration_ms">>, <<"receive_duration_ms">>, <<"drain_ms">>,
                             <<"cpu_ms">>, <<"peak_rss_bytes">>]),
                 lists:sort(maps:keys(Metrics))),
    #{<<"sent_message">> := SentMessages, <<"received_message">> := ReceivedMessages,
      <<"sent_exit_signal">> := SentExits, <<"received_exit_signal">> := ReceivedExits,
      <<"receiver_alive">> := 1} = Verify,
    ?assertEqual(SentMessages, ReceivedMessages),
    ?assertEqual(SentExits, ReceivedExits),
    {Metrics, SentMessages + SentExits}.

fanin_msgbench_method_test() ->
    {Metrics, Sent} = fanin_metrics(msgbench, [#{percent => 100, kind => message, size => 1}]),
    #{<<"send_duration_ms">> := SendMs, <<"send_throughput_per_s">> := SendRate,
      <<"receive_duration_ms">> := ReceiveMs, <<"receive_throughput_per_s">> := ReceiveRate,
      <<"drain_ms">> := DrainMs} = Metrics,
    ?assert(SendMs >= 30),
    ?assert(DrainMs >= 0),
    ?assert(abs(SendRate - Sent / (SendMs / 1000)) / SendRate < 1.0e-6),
    ?assert(abs(ReceiveRate - Sent / (ReceiveMs / 1000)) / ReceiveRate < 1.0e-6).

fanin_otp_method_test() ->
    {Metrics, Sent} = fanin_metrics(otp, [#{percent => 50, kind => exit_signal, size => 1},
                                          #{percent => 50, kind => message, size => 1}]),
    #{<<"send_duration_ms">> := SendMs, <<"send_throughput_per_s">> := SendRate,
      <<"receive_duration_ms">> := ReceiveMs, <<"receive_throughput_per_s">> := ReceiveRate,
      <<"drain_ms">> := DrainMs} = Metrics,
    %% The planned duration; the drain added in whole milliseconds.
    ?assertEqual(30, SendMs),
    ?assertEqual(30 + floor(DrainMs), ReceiveMs),
    ?assert(abs(SendRate - Sent / 0.030) / SendRate < 1.0e-6),
    ?assert(abs(ReceiveRate - Sent / (ReceiveMs / 1000)) / ReceiveRate < 1.0e-6).

fanin_memory_limit_is_a_resource_error_test() ->
    %% 64 MB, the smallest limit, is below what 5000 senders with their
    %% 1000-word payloads take before they send anything.
    {Kind, Message} = error_of(request(fanin, default,
                                       #{senders => 5000, duration_ms => 2000, memory_limit_mb => 64,
                                         mix => [#{percent => 100, kind => message, size => 1000}]})),
    ?assertEqual(<<"resource">>, Kind),
    ?assertMatch({match, _}, re:run(Message, "^memory_limit_mb = 64 exceeded")).

chat_params(Overrides) ->
    maps:merge(#{groups => 2, clients_per_group => 3, duration_s => 0.1, think_ms => 0,
                 listener_delay_ms => 0, message => text, history => 10, drain_timeout_s => 5},
               Overrides).

chat_result_test() ->
    Final = final(request(chat, default, chat_params(#{}))),
    ?assertMatch(#{<<"type">> := <<"result">>}, Final),
    #{<<"metrics">> := Metrics, <<"verify">> := Verify} = Final,
    {ok, #{<<"metrics">> := SpecMetrics}} = msgbench_spec:workload(<<"chat">>),
    ?assertEqual(lists:sort(maps:keys(SpecMetrics)), lists:sort(maps:keys(Metrics))),
    ?assertEqual([<<"cross_group">>, <<"received">>, <<"self_deliveries">>, <<"sent">>,
                  <<"users">>],
                 lists:sort(maps:keys(Verify))),
    #{<<"sent">> := Sent, <<"received">> := Received} = Verify,
    ?assertMatch(#{<<"cross_group">> := 0, <<"self_deliveries">> := 0, <<"users">> := 6}, Verify),
    ?assert(Sent > 0),
    ?assertEqual(Sent, Received),
    #{<<"sent_count">> := SentCount, <<"send_window_ms">> := WindowMs,
      <<"sent_per_client_per_s">> := PerClientPerS, <<"received_per_group_count">> := PerGroup,
      <<"peak_rss_bytes">> := Peak, <<"memory_per_user_bytes">> := PerUser,
      <<"processes_count">> := Processes, <<"received_count">> := ReceivedCount,
      <<"received_in_window_count">> := InWindow, <<"received_per_s">> := ReceivedPerS} = Metrics,
    ?assertEqual(Sent, SentCount),
    ?assertEqual(Received, ReceivedCount),
    ?assert(WindowMs >= 100),
    ?assert(abs(PerClientPerS - Sent / 6 / (WindowMs / 1000)) / PerClientPerS < 1.0e-6),
    %% The received averages count what arrived before T, as the seed's Received did.
    ?assert(InWindow =< Received),
    ?assertEqual(InWindow / 2, PerGroup),
    ?assert(abs(ReceivedPerS - InWindow / (WindowMs / 1000)) =< 1.0e-6 * max(ReceivedPerS, 1)),
    ?assertEqual(Peak / 6, PerUser),
    ?assertEqual(2 * (2 * 3 + 1) + 3, Processes).

chat_realistic_binary_test() ->
    Final = final(request(chat, default, chat_params(#{think_ms => 40, duration_s => 0.2,
                                                       message => binary}))),
    %% 5 sends due before T, whatever the phase.
    ?assertMatch(#{<<"type">> := <<"result">>,
                   <<"verify">> := #{<<"sent">> := 30, <<"received">> := 30}}, Final).

chat_bad_params_test() ->
    ?assertEqual({<<"bad_params">>,
                  <<"clients_per_group = 1 is out of range: clients_per_group must be an integer "
                    ">= 2 and <= 100000 (a user needs a peer in its group)">>},
                 error_of(request(chat, default, chat_params(#{clients_per_group => 1})))),
    ?assertMatch({<<"bad_params">>, <<"unknown parameter no_such_param = 1", _/binary>>},
                 error_of(request(chat, default, chat_params(#{no_such_param => 1})))),
    ?assertMatch({<<"bad_params">>, <<"message = \"xml\"", _/binary>>},
                 error_of(request(chat, default, chat_params(#{message => xml})))).

chat_process_limit_is_a_resource_error_test() ->
    {Kind, Message} = error_of(request(chat, default,
                                       chat_params(#{groups => 1000000,
                                                     clients_per_group => 100000}))),
    ?assertEqual(<<"resource">>, Kind),
    ?assertMatch({match, _}, re:run(Message, "^groups = 1000000 and clients_per_group = 100000 "
                                             ".* needs 200001000003 processes .*larger \\+P")).

bad_params_test() ->
    ?assertEqual({<<"bad_params">>, <<"n = 1 is out of range: n must be an integer >= 2 and <= 134217727">>},
                 error_of(request(ring, default, #{n => 1, m => 10, payload => <<"BOO!">>}))),
    ?assertMatch({<<"bad_params">>, <<"unknown parameter x = 1: ring takes only m, n, payload">>},
                 error_of(request(ring, default, #{x => 1}))),
    ?assertMatch({<<"bad_params">>, <<"mix = [", _/binary>>},
                 error_of(request(fanin, default,
                                  #{mix => [#{percent => 60, kind => message, size => 1},
                                            #{percent => 60, kind => exit_signal, size => 1}]}))).

unsupported_test() ->
    ?assertMatch({<<"unsupported">>, <<"workload pingpong is not implemented", _/binary>>},
                 error_of(request(pingpong, default, #{}))),
    ?assertMatch({<<"unsupported">>, <<"variant on_heap does not implement workload socket", _/binary>>},
                 error_of(request(socket, on_heap, #{}))),
    ?assertMatch({<<"unsupported">>, <<"variant threads is not one of this target's variants", _/binary>>},
                 error_of(request(ring, threads, #{}))),
    ?assertMatch({<<"unsupported">>, <<"variant on_heap does not implement workload ring", _/binary>>},
                 error_of(request(ring, on_heap, #{}))).

process_limit_is_a_resource_error_test() ->
    Limit = erlang:system_info(process_limit),
    {Kind, Message} = error_of(request(ring, default, #{n => Limit + 1})),
    ?assertEqual(<<"resource">>, Kind),
    ?assertMatch({match, _}, re:run(Message, "^n = \\d+ needs \\d+ processes")).

single_scheduler_needs_one_scheduler_test() ->
    Final = final(request(ring, single_scheduler, #{n => 10, m => 1})),
    case erlang:system_info(schedulers_online) of
        1 -> ?assertMatch(#{<<"type">> := <<"result">>}, Final);
        _ -> ?assertMatch(#{<<"type">> := <<"error">>, <<"kind">> := <<"internal">>}, Final)
    end.

malformed_requests_test_() ->
    [?_assertMatch({<<"bad_params">>, _}, error_of(Input))
     || Input <- [eof, <<"">>, <<"not json\n">>, <<"[1]\n">>,
                  <<"{\"workload\":\"ring\",\"variant\":\"default\"}\n">>,
                  <<"{\"workload\":\"ring\",\"variant\":\"default\",\"params\":{},\"x\":1}\n">>]].

request_line_may_end_in_newline_test() ->
    ?assertMatch(#{<<"type">> := <<"result">>},
                 final(<<(request(ring, default, #{n => 10, m => 1}))/binary, "\n">>)).

%%--------------------------------------------------------------------
%% socket: the worker starts its own server half (no MSGBENCH_PEER_*)
%%--------------------------------------------------------------------

socket_params(Overrides) ->
    maps:merge(#{mode => echo, size => 1024, total_bytes => 65536, sockets => 2, data => binary,
                 placement => local, check_content => 1, port => 0}, Overrides).

socket_result_test_() ->
    {timeout, 60,
     fun() ->
             [begin
                  Final = final(request(socket, default, socket_params(#{mode => Mode}))),
                  ?assertMatch(#{<<"type">> := <<"result">>,
                                 <<"verify">> := #{<<"messages_sent">> := 128,
                                                   <<"messages_received">> := 128,
                                                   <<"bytes_sent">> := 131072,
                                                   <<"bytes_received">> := 131072,
                                                   <<"content_mismatches">> := 0}}, Final),
                  #{<<"metrics">> := Metrics} = Final,
                  ?assertEqual(lists:sort([<<"elapsed_ms">>, <<"round_trip_us">>,
                                           <<"bandwidth_bytes_per_s">>, <<"msgs_per_s">>,
                                           <<"peak_rss_bytes">>]),
                               lists:sort(maps:keys(Metrics)))
              end || Mode <- [echo, flow]]
     end}.

socket_bad_params_test() ->
    ?assertMatch({<<"bad_params">>, <<"size = 2048 is out of range: size must not exceed total_bytes = 1024",
                                      _/binary>>},
                 error_of(request(socket, default, socket_params(#{size => 2048, total_bytes => 1024})))),
    ?assertMatch({<<"bad_params">>, <<"size = 0 is out of range: size must be an integer >= 1", _/binary>>},
                 error_of(request(socket, default, socket_params(#{size => 0})))),
    ?assertMatch({<<"bad_params">>, <<"sockets = 1025 is out of range", _/binary>>},
                 error_of(request(socket, default, socket_params(#{sockets => 1025})))),
    ?assertMatch({<<"bad_params">>, <<"data = \"text\" is not accepted: data must be one of", _/binary>>},
                 error_of(request(socket, default, socket_params(#{data => text})))).

socket_remote_needs_the_harness_test() ->
    case os:getenv("MSGBENCH_PEER_COMMAND") of
        false ->
            ?assertMatch({<<"unsupported">>, <<"placement = remote needs the harness", _/binary>>},
                         error_of(request(socket, default, socket_params(#{placement => remote}))));
        _ ->
            ok
    end.

%% The server half's entry point: its lines for one request line.
served_lines(Input) ->
    Self = self(),
    Ref = make_ref(),
    ok = msgbench_worker:serve(Input, fun(Line) -> Self ! {Ref, Line}, ok end,
                               fun() -> receive never -> eof end end),
    collect(Ref).

serve_refuses_what_it_cannot_serve_test() ->
    ?assertMatch([#{type := error, kind := unsupported, message := <<"workload ring has no server half">>}],
                 served_lines(request(ring, default, #{n => 10, m => 1}))),
    ?assertMatch([#{type := error, kind := bad_params}],
                 served_lines(request(socket, default, socket_params(#{size => 0})))),
    ?assertMatch([#{type := error, kind := bad_params}], served_lines(eof)).
