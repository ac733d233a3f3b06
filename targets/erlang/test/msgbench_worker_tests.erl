%% The protocol, driven in this VM through msgbench_worker:handle/3: hello,
%% one result of raw facts (or one error), options applied or refused.
-module(msgbench_worker_tests).

-include_lib("eunit/include/eunit.hrl").

%% The lines the worker would print for one stdin line, decoded again.
lines(Input) ->
    Self = self(),
    Ref = make_ref(),
    ok = msgbench_worker:handle(msgbench_erlang:spec(), Input, fun(Line) -> Self ! {Ref, Line}, ok end),
    Lines = collect(Ref),
    [begin {ok, Decoded} = msgbench_json:decode(iolist_to_binary(msgbench_json:encode(Line))),
           Decoded
     end || Line <- Lines].

collect(Ref) ->
    receive {Ref, Line} -> [Line | collect(Ref)] after 0 -> [] end.

request(Workload, Variant, Options, Params) ->
    iolist_to_binary(msgbench_json:encode(#{workload => Workload, variant => Variant,
                                            options => Options, params => Params,
                                            repetition => 1, warmup => false})).

%% hello, then exactly one final line, which is returned (a chat run's
%% samples between them are checked by chat_samples_test).
final(Input) ->
    [Hello, Final] = [Line || #{<<"type">> := Type} = Line <- lines(Input), Type =/= <<"sample">>],
    ?assertMatch(#{<<"type">> := <<"hello">>, <<"target">> := <<"erlang">>,
                   <<"runtime_version">> := <<"OTP ", _/binary>>, <<"variant">> := _}, Hello),
    Final.

error_of(Input) ->
    #{<<"type">> := <<"error">>, <<"kind">> := Kind, <<"message">> := Message} = final(Input),
    {Kind, Message}.

%% A result's raw facts, whose names must be exactly Names, all numbers
%% (or lists of numbers); and its verify counts.
result(Input, Names) ->
    Final = final(Input),
    ?assertMatch(#{<<"type">> := <<"result">>, <<"measured">> := _, <<"verify">> := _}, Final),
    ?assertNot(maps:is_key(<<"metrics">>, Final)),
    #{<<"measured">> := Measured, <<"verify">> := Verify} = Final,
    ?assertEqual(lists:sort(Names), lists:sort(maps:keys(Measured))),
    [?assert(is_integer(V) andalso V >= 0 orelse is_list(V) andalso lists:all(fun is_integer/1, V))
     || V <- maps:values(Measured)],
    {Measured, Verify, maps:get(<<"histograms">>, Final, #{})}.

-define(OFF_HEAP, #{message_queue_data => off_heap}).

%%--------------------------------------------------------------------
%% ring
%%--------------------------------------------------------------------

ring_result_test() ->
    {Measured, Verify, Histograms} =
        result(request(ring, default, ?OFF_HEAP, #{n => 100, m => 3, payload => <<"BOO!">>}),
               [<<"create_wall_ns">>, <<"create_cpu_ns">>, <<"pass_wall_ns">>, <<"pass_cpu_ns">>,
                <<"peak_rss_bytes">>]),
    ?assertEqual(#{<<"hops">> => 300, <<"laps">> => 3, <<"links">> => 100}, Verify),
    ?assertEqual(#{}, Histograms),
    #{<<"create_wall_ns">> := CreateNs, <<"pass_wall_ns">> := PassNs,
      <<"peak_rss_bytes">> := Peak} = Measured,
    ?assert(CreateNs > 0 andalso PassNs > 0),
    ?assert(Peak > 1000000).

%% The variant is data: hello echoes whatever name the request gives, and
%% the workload alone picks the code.
hello_echoes_the_variant_name_test() ->
    [Hello, Final] = lines(request(ring, <<"any_name-1.0">>, #{}, #{n => 10, m => 1, payload => <<>>})),
    ?assertMatch(#{<<"variant">> := <<"any_name-1.0">>}, Hello),
    ?assertMatch(#{<<"type">> := <<"result">>}, Final).

process_limit_is_a_resource_error_test() ->
    Limit = erlang:system_info(process_limit),
    {Kind, Message} = error_of(request(ring, default, #{}, #{n => Limit + 1, m => 1, payload => <<>>})),
    ?assertEqual(<<"resource">>, Kind),
    ?assertMatch({match, _}, re:run(Message, "^n = \\d+ needs \\d+ processes .*larger \\+P")).

%%--------------------------------------------------------------------
%% Options and the request
%%--------------------------------------------------------------------

unknown_option_is_an_internal_error_naming_it_test() ->
    {Kind, Message} = error_of(request(ring, default, #{no_such_option => 1, message_queue_data => off_heap},
                                       #{n => 10, m => 1, payload => <<>>})),
    ?assertEqual(<<"internal">>, Kind),
    ?assertEqual(<<"unknown option no_such_option (known here: active, message_queue_data, yield)">>,
                 Message).

option_of_the_wrong_kind_is_an_internal_error_test() ->
    ?assertEqual({<<"internal">>, <<"option message_queue_data = \"in_the_cloud\": expected "
                                    "\"off_heap\" or \"on_heap\"">>},
                 error_of(request(fanin, default, #{message_queue_data => in_the_cloud},
                                  fanin_params(msgbench, [message(1)])))).

unsupported_workload_test() ->
    ?assertEqual({<<"unsupported">>, <<"workload pingpong is not implemented by the erlang target "
                                  "(implemented: chat, fanin, ring, socket)">>},
                 error_of(request(pingpong, default, #{}, #{}))).

%% The harness writes every request; one it could not have written is a bug.
malformed_requests_are_internal_errors_test_() ->
    [?_assertMatch({<<"internal">>, _}, error_of(Input))
     || Input <- [eof, <<"">>, <<"not json\n">>, <<"[1]\n">>,
                  <<"{\"workload\":\"ring\",\"variant\":\"default\"}\n">>]].

%% A request typed by hand may leave options out: {} is meant.
options_may_be_left_out_test() ->
    Line = msgbench_json:encode(#{workload => ring, variant => default,
                                  params => #{n => 10, m => 1, payload => <<"BOO!">>}}),
    ?assertMatch(#{<<"type">> := <<"result">>}, final(iolist_to_binary([Line, $\n]))).

%%--------------------------------------------------------------------
%% fanin
%%--------------------------------------------------------------------

message(Size) -> #{percent => 100, kind => message, size => Size}.

fanin_params(Method, Mix) ->
    #{senders => 2, duration_ms => 30, mix => Mix, method => Method, memory_limit_mb => 8192}.

fanin_result(Options, Method, Mix) ->
    {Measured, Verify, _} = result(request(fanin, default, Options, fanin_params(Method, Mix)),
                                   [<<"send_ns">>, <<"receive_ns">>, <<"drain_ns">>, <<"cpu_ns">>,
                                    <<"peak_rss_bytes">>]),
    #{<<"sent_message">> := SentMessages, <<"received_message">> := ReceivedMessages,
      <<"sent_exit_signal">> := SentExits, <<"received_exit_signal">> := ReceivedExits,
      <<"receiver_alive">> := 1} = Verify,
    ?assertEqual(SentMessages, ReceivedMessages),
    ?assertEqual(SentExits, ReceivedExits),
    ?assert(SentMessages + SentExits > 0),
    Measured.

%% The same raw facts whatever the method: the harness derives each.
fanin_times_fit_together_test_() ->
    [fun() ->
             #{<<"send_ns">> := Send, <<"receive_ns">> := Receive, <<"drain_ns">> := Drain} =
                 fanin_result(Options, Method, Mix),
             ?assert(Send >= 30000000),
             ?assert(Receive > 0),
             ?assertEqual(max(0, Receive - Send), Drain)
     end || {Options, Method, Mix} <- [{?OFF_HEAP, msgbench, [message(1)]},
                                       {#{message_queue_data => on_heap}, otp, [message(10)]},
                                       {?OFF_HEAP, otp, [#{percent => 50, kind => exit_signal, size => 1},
                                                         #{percent => 50, kind => message, size => 1}]}]].

fanin_memory_limit_is_a_resource_error_test() ->
    %% 64 MB, the smallest limit, is below what 5000 senders with their
    %% 1000-word payloads take before they send anything.
    {Kind, Message} = error_of(request(fanin, default, ?OFF_HEAP,
                                       #{senders => 5000, duration_ms => 2000, memory_limit_mb => 64,
                                         method => msgbench, mix => [message(1000)]})),
    ?assertEqual(<<"resource">>, Kind),
    ?assertMatch({match, _}, re:run(Message, "^memory_limit_mb = 64 exceeded")).

%%--------------------------------------------------------------------
%% chat
%%--------------------------------------------------------------------

chat_params(Overrides) ->
    maps:merge(#{groups => 2, clients_per_group => 3, duration_s => 0.1, think_ms => 0,
                 listener_delay_ms => 0, message => text, history => 10, drain_timeout_s => 5},
               Overrides).

chat_result(Options, Params) ->
    {Measured, Verify, Histograms} = chat_sending(Options, Params, 3),
    ?assertEqual([<<"latency_ns">>], maps:keys(Histograms)),
    #{<<"latency_ns">> := Latency} = Histograms,
    #{<<"sent">> := Sent, <<"received">> := Received} = Verify,
    ?assert(Sent > 0),
    ?assertEqual(Sent, Received),
    ?assertMatch(#{<<"cross_group">> := 0, <<"self_deliveries">> := 0}, Verify),
    %% Every delivery is in the histogram: sparse pairs, in bucket order.
    ?assertEqual(Received, lists:sum([Count || [_, Count] <- Latency])),
    Buckets = [Bucket || [Bucket, _] <- Latency],
    ?assertEqual(lists:usort(Buckets), Buckets),
    [?assert(Count > 0) || [_, Count] <- Latency],
    %% The largest latency is exact, and lies in the last bucket.
    #{<<"latency_max_ns">> := Max} = Measured,
    ?assertEqual(msgbench_histogram:bucket(Max), lists:last(Buckets)),
    {Measured, Verify}.

%% A run that sent something: on a busy machine the VM's timers wake the
%% clients late, past a 100 ms stress window, and they rightly send nothing
%% (msgbench_chat_tests:run_sending/1); such a run says nothing of the rules,
%% so it runs again with twice the window, at most Retries more times.
chat_sending(Options, #{duration_s := Duration} = Params, Retries) ->
    Result = result(request(chat, default, Options, Params),
                    [<<"setup_ns">>, <<"send_window_ns">>, <<"drain_ns">>, <<"received_in_window">>,
                     <<"processes_count">>, <<"peak_rss_bytes">>, <<"runtime_memory_bytes">>,
                     <<"latency_max_ns">>]),
    case Result of
        {_, #{<<"sent">> := 0}, _} when Retries > 0 ->
            chat_sending(Options, Params#{duration_s := 2 * Duration}, Retries - 1);
        _ -> Result
    end.

chat_stress_test() ->
    {Measured, Verify} = chat_result(?OFF_HEAP, chat_params(#{})),
    ?assertMatch(#{<<"users">> := 6}, Verify),
    #{<<"send_window_ns">> := Window, <<"processes_count">> := Processes,
      <<"received_in_window">> := InWindow} = Measured,
    ?assert(Window >= 100000000),
    ?assert(InWindow =< maps:get(<<"received">>, Verify)),
    ?assertEqual(2 * (2 * 3 + 1) + 3, Processes).

chat_with_every_option_test() ->
    chat_result(#{message_queue_data => on_heap, yield => true}, chat_params(#{})).

chat_realistic_binary_test() ->
    {_, Verify} = chat_result(?OFF_HEAP, chat_params(#{think_ms => 40, duration_s => 0.2,
                                                       message => binary})),
    %% 5 sends due before T, whatever the phase.
    ?assertMatch(#{<<"sent">> := 30, <<"received">> := 30}, Verify).

%% A chat run's samples: between hello and the result, the first at t = 0
%% and the last at the end of the drain, in time order, every name with its unit.
chat_samples_test_() ->
    {timeout, 60, fun chat_samples/0}.  % 1.2 s of sends and the drain, on a loaded machine

chat_samples() ->
    [Hello | Rest] = lines(request(chat, default, ?OFF_HEAP, chat_params(#{duration_s => 1.2}))),
    ?assertMatch(#{<<"type">> := <<"hello">>}, Hello),
    {Samples, [Result]} = lists:splitwith(fun(#{<<"type">> := Type}) -> Type =:= <<"sample">> end, Rest),
    ?assertMatch(#{<<"type">> := <<"result">>}, Result),
    %% 1.2 s of sends: the one at start, one a second later, the last.
    ?assert(length(Samples) >= 3),
    Times = [T || #{<<"t_ms">> := T} <- Samples],
    ?assertEqual(lists:sort(Times), Times),
    ?assert(hd(Times) < 100),
    ?assert(lists:last(Times) >= 1200),
    [begin
         ?assertMatch({match, _}, re:run(Name, "^[a-z][a-z0-9_]*_(bytes|count|ns|ms|percent|per_s)$")),
         ?assert(is_number(Value) andalso Value >= 0)
     end || #{<<"values">> := Values} <- Samples, {Name, Value} <- maps:to_list(Values)],
    Last = lists:last(Samples),
    ?assertMatch(#{<<"values">> := #{<<"rss_bytes">> := _, <<"peak_rss_bytes">> := _, <<"cpu_ns">> := _,
                                     <<"erlang_memory_processes_bytes">> := _, <<"erlang_gc_count">> := _,
                                     <<"erlang_io_out_bytes">> := _, <<"erlang_processes_count">> := _,
                                     <<"scheduler_utilization_percent">> := _}}, Last),
    %% The VM's counters only grow.
    [#{<<"values">> := First} | _] = Samples,
    #{<<"values">> := LastValues} = Last,
    ?assert(maps:get(<<"erlang_gc_count">>, LastValues) >= maps:get(<<"erlang_gc_count">>, First)),
    ?assert(maps:get(<<"cpu_ns">>, LastValues) >= maps:get(<<"cpu_ns">>, First)),
    %% The last is taken at the end of the drain, while the run's 2 x (2 x 3 + 1)
    %% groups, users and clients and 3 supervisors still live: 17 more than
    %% this VM has once the run is over.
    ?assert(maps:get(<<"erlang_processes_count">>, LastValues) >= erlang:system_info(process_count) + 17).

chat_process_limit_is_a_resource_error_test() ->
    {Kind, Message} = error_of(request(chat, default, ?OFF_HEAP,
                                       chat_params(#{groups => 1000000,
                                                     clients_per_group => 100000}))),
    ?assertEqual(<<"resource">>, Kind),
    ?assertMatch({match, _}, re:run(Message, "^groups = 1000000 and clients_per_group = 100000 "
                                             ".* needs 200001000003 processes .*larger \\+P")).

%%--------------------------------------------------------------------
%% socket: the worker starts its own server half (no MSGBENCH_PEER_*), a
%% second VM, which reads the same request and applies the same options
%%--------------------------------------------------------------------

socket_params(Overrides) ->
    maps:merge(#{mode => echo, size => 1024, total_bytes => 65536, sockets => 2, data => binary,
                 placement => local, check_content => 1, port => 0}, Overrides).

socket_result_test_() ->
    {timeout, 120,
     fun() ->
             [begin
                  {Measured, Verify, _} =
                      result(request(socket, default, Options, socket_params(#{mode => Mode, data => Data})),
                             [<<"elapsed_ns">>, <<"wall_ns">>, <<"peak_rss_bytes">>]),
                  ?assertEqual(#{<<"messages_sent">> => 128, <<"messages_received">> => 128,
                                 <<"bytes_sent">> => 131072, <<"bytes_received">> => 131072,
                                 <<"content_mismatches">> => 0}, Verify),
                  #{<<"elapsed_ns">> := Elapsed, <<"wall_ns">> := Wall} = Measured,
                  ?assertEqual(2, length(Elapsed)),
                  [?assert(E > 0 andalso E =< Wall) || E <- Elapsed]
              end || Options <- [#{}, #{active => once}, #{active => 100, message_queue_data => off_heap}],
                     {Mode, Data} <- [{echo, binary}, {flow, list}]]
     end}.

socket_port_in_use_test() ->
    {ok, Taken} = gen_tcp:listen(0, [inet]),
    {ok, Port} = inet:port(Taken),
    Error = error_of(request(socket, default, #{}, socket_params(#{port => Port}))),
    ok = gen_tcp:close(Taken),
    ?assertMatch({<<"resource">>, <<"the server: port ", _/binary>>}, Error).

socket_remote_needs_the_harness_test() ->
    case os:getenv("MSGBENCH_PEER_COMMAND") of
        false ->
            ?assertMatch({<<"unsupported">>, <<"placement = remote needs the harness", _/binary>>},
                         error_of(request(socket, default, #{}, socket_params(#{placement => remote}))));
        _ ->
            ok
    end.

%% The server half's entry point: its lines for one request line.
served_lines(Input) ->
    Self = self(),
    Ref = make_ref(),
    ok = msgbench_worker:serve(msgbench_erlang:spec(), Input, fun(Line) -> Self ! {Ref, Line}, ok end,
                               fun() -> receive never -> eof end end),
    collect(Ref).

serve_refuses_what_it_cannot_serve_test() ->
    ?assertMatch([#{type := error, kind := unsupported, message := <<"workload ring has no server half">>}],
                 served_lines(request(ring, default, #{}, #{n => 10, m => 1, payload => <<>>}))),
    ?assertMatch([#{type := error, kind := internal, message := <<"unknown option x", _/binary>>}],
                 served_lines(request(socket, default, #{x => 1}, socket_params(#{})))),
    ?assertMatch([#{type := error, kind := internal}], served_lines(eof)).
