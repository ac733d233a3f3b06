-module(msgbench_fanin_tests).

-include_lib("eunit/include/eunit.hrl").

config(Senders, DurationMs, Mix) ->
    #{senders => Senders, duration_ms => DurationMs, mix => Mix,
      message_queue_data => off_heap, memory_limit_bytes => 8 bsl 30}.

run(Config) ->
    Self = self(),
    Pid = spawn(fun() -> Self ! {self(), msgbench_fanin:run(Config)} end),
    receive {Pid, Result} -> Result end.

messages_only_test() ->
    {ok, Run} = run(config(2, 50, [{1.0, message, 1}])),
    #{sent_message := Sent, received_message := Received,
      sent_exit_signal := SentExits, received_exit_signal := ReceivedExits,
      receiver_alive := Alive} = Run,
    ?assert(Sent > 0),
    ?assertEqual(Sent, Received),
    ?assertEqual({0, 0}, {SentExits, ReceivedExits}),
    ?assertEqual(1, Alive).

exit_signals_only_test() ->
    {ok, Run} = run(config(1, 30, [{1.0, exit_signal, 3}])),
    ?assertMatch(#{sent_message := 0, received_message := 0, receiver_alive := 1}, Run),
    #{sent_exit_signal := Sent, received_exit_signal := Received} = Run,
    ?assert(Sent > 0),
    ?assertEqual(Sent, Received).

mixed_signals_are_counted_per_kind_test() ->
    {ok, Run} = run(config(3, 50, [{0.5, exit_signal, 10}, {0.5, message, 10}])),
    #{sent_message := SentMessages, received_message := ReceivedMessages,
      sent_exit_signal := SentExits, received_exit_signal := ReceivedExits} = Run,
    ?assertEqual(SentMessages, ReceivedMessages),
    ?assertEqual(SentExits, ReceivedExits),
    %% Both kinds were picked, in roughly equal numbers.
    ?assert(SentMessages > 0 andalso SentExits > 0),
    ?assert(abs(SentMessages - SentExits) / (SentMessages + SentExits) < 0.1).

%% Messages only: on OTP 25 an on_heap receiver drains a backlog of exit
%% signals in time that grows with the square of the backlog (see README).
on_heap_receiver_test() ->
    {ok, Run} = run((config(2, 30, [{1.0, message, 10}]))#{message_queue_data => on_heap}),
    #{sent_message := Sent, received_message := Received} = Run,
    ?assert(Sent > 0),
    ?assertEqual(Sent, Received).

times_are_in_order_test() ->
    {ok, #{t_start := Start, t_senders_stopped := Stopped, t_last_receive := Last}} =
        run(config(1, 40, [{1.0, message, 1}])),
    ?assert(Stopped - Start >= 40000000),      % ns
    ?assert(Last > Start).

memory_guard_test() ->
    %% A limit below what the VM already uses trips at the first check.
    ?assertMatch({memory_exceeded, Bytes} when Bytes > 1024,
                 run((config(2, 10000, [{1.0, message, 100}]))#{memory_limit_bytes => 1024})).

senders_and_receiver_are_gone_afterwards_test() ->
    Before = erlang:system_info(process_count),
    {ok, _} = run(config(20, 20, [{1.0, message, 1}])),
    timer:sleep(50),
    ?assert(erlang:system_info(process_count) =< Before).
