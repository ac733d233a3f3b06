%% Parallel signal send/receive (seed 000, after OTP's
%% erts/test/parallel_messages_SUITE.erl): N senders send messages and exit
%% signals to one receiver for a planned time.
%%
%% As in the suite: every sender prepares its payloads (lists of S integers)
%% itself and sends them as they are, so each send copies the list into the
%% receiver's queue; each send picks its kind with rand:uniform() against the
%% cumulative shares of the mix; a sender looks for stop after every send;
%% exit signals carry the list as the reason and the receiver traps exits;
%% after stop every sender reports its counts to the coordinator, then sends
%% an end marker to the receiver.
%%
%% Beyond the suite: senders count per kind and the receiver counts per kind,
%% the coordinator keeps the time it took to stop the senders, and while the
%% senders run it watches the VM's memory, since an Erlang mailbox is
%% unbounded and a slow receiver would otherwise let the backlog grow until
%% the machine runs out of memory.
-module(msgbench_fanin).

-export([run/1]).
%% Spawned with spawn/3 and spawn_opt/4.
-export([sender/3, receiver/2]).

-export_type([config/0, signal/0, measurement/0]).

-type signal() :: {Share :: number(), message | exit_signal, Size :: pos_integer()}.

-type config() :: #{senders := pos_integer(),
                    duration_ms := pos_integer(),
                    mix := [signal()],             % shares add up to 1.0
                    message_queue_data := off_heap | on_heap,
                    memory_limit_bytes := pos_integer()}.

-type measurement() :: #{t_start := msgbench_measure:instant(),
                         t_senders_stopped := msgbench_measure:instant(),
                         t_last_receive := msgbench_measure:instant(),
                         cpu_ns := non_neg_integer(),
                         sent_message := non_neg_integer(),
                         sent_exit_signal := non_neg_integer(),
                         received_message := non_neg_integer(),
                         received_exit_signal := non_neg_integer(),
                         receiver_alive := 0 | 1}.

%% How often the coordinator looks at erlang:memory(total) while the
%% senders run: often enough to stop well before a backlog that grows by
%% hundreds of MB a second gets out of hand, rarely enough to cost nothing.
-define(MEMORY_CHECK_INTERVAL_MS, 20).

-spec run(config()) -> {ok, measurement()} | {memory_exceeded, Bytes :: pos_integer()}.
run(#{senders := NrOfSenders, duration_ms := DurationMs, mix := Mix,
      message_queue_data := QueueData, memory_limit_bytes := MemoryLimit}) ->
    %% The coordinator sleeps nearly all the time; high priority makes it
    %% wake on time to stop the senders and to check memory, even when the
    %% senders keep every scheduler busy.
    process_flag(priority, high),
    Coordinator = self(),
    {Receiver, ReceiverMonitor} =
        spawn_opt(?MODULE, receiver, [Coordinator, NrOfSenders],
                  [monitor, {message_queue_data, QueueData}]),
    Senders = [spawn_link(?MODULE, sender, [Receiver, Coordinator, Mix])
               || _ <- lists:seq(1, NrOfSenders)],
    CpuStart = msgbench_measure:cpu_ns(),
    TStart = msgbench_measure:now(),
    [Sender ! start || Sender <- Senders],
    Deadline = TStart + DurationMs * 1000000,
    Watch = watch_memory(Deadline, MemoryLimit),
    [Sender ! stop || Sender <- Senders],
    case Watch of
        {memory_exceeded, _Bytes} = Exceeded ->
            %% Give the backlog back at once; kill, as the receiver traps exits.
            exit(Receiver, kill),
            Exceeded;
        ok ->
            {SentMessages, SentExits} = collect_sent_counts(NrOfSenders, 0, 0),
            TSendersStopped = msgbench_measure:now(),
            Received = await_receiver(Receiver, ReceiverMonitor),
            CpuEnd = msgbench_measure:cpu_ns(),
            {ok, Received#{t_start => TStart,
                           t_senders_stopped => TSendersStopped,
                           cpu_ns => CpuEnd - CpuStart,
                           sent_message => SentMessages,
                           sent_exit_signal => SentExits}}
    end.

watch_memory(Deadline, Limit) ->
    Remaining = (Deadline - msgbench_measure:now()) div 1000,   % us
    case Remaining > 0 of
        false ->
            ok;
        true ->
            SleepMs = min(?MEMORY_CHECK_INTERVAL_MS, ceil_div(Remaining, 1000)),
            receive after SleepMs -> ok end,
            case erlang:memory(total) of
                Used when Used > Limit -> {memory_exceeded, Used};
                _ -> watch_memory(Deadline, Limit)
            end
    end.

ceil_div(A, B) -> (A + B - 1) div B.

collect_sent_counts(0, Messages, Exits) ->
    {Messages, Exits};
collect_sent_counts(Pending, Messages, Exits) ->
    receive
        {sent, _Sender, SenderMessages, SenderExits} ->
            collect_sent_counts(Pending - 1, Messages + SenderMessages, Exits + SenderExits)
    end.

await_receiver(Receiver, Monitor) ->
    receive
        {received, Receiver, TLastReceive, Messages, Exits} ->
            erlang:demonitor(Monitor, [flush]),
            #{t_last_receive => TLastReceive, received_message => Messages,
              received_exit_signal => Exits, receiver_alive => 1};
        {'DOWN', Monitor, process, Receiver, _Reason} ->
            %% Whatever it had counted died with it.
            #{t_last_receive => msgbench_measure:now(), received_message => 0,
              received_exit_signal => 0, receiver_alive => 0}
    end.

%%--------------------------------------------------------------------
%% Sender
%%--------------------------------------------------------------------

-spec sender(pid(), pid(), [signal()]) -> ok.
sender(Receiver, Coordinator, Mix) ->
    Choices = choices(Mix, 0.0),
    receive start -> ok end,
    {Messages, Exits} = send_loop(Receiver, Choices, 0, 0),
    Coordinator ! {sent, self(), Messages, Exits},
    Receiver ! {sender_done, self()},
    ok.

%% [{CumulativeShare, Kind, Payload}], the last entry taking whatever
%% rounding leaves over (as the suite's get_op/2 does).
choices([{_Share, Kind, Size}], _Cumulative) ->
    [{1.0, Kind, lists:seq(1, Size)}];
choices([{Share, Kind, Size} | Rest], Cumulative) ->
    Next = Cumulative + Share,
    [{Next, Kind, lists:seq(1, Size)} | choices(Rest, Next)].

send_loop(Receiver, Choices, Messages, Exits) ->
    case pick(Choices, rand:uniform()) of
        {message, Payload} ->
            Receiver ! Payload,
            continue(Receiver, Choices, Messages + 1, Exits);
        {exit_signal, Reason} ->
            exit(Receiver, Reason),
            continue(Receiver, Choices, Messages, Exits + 1)
    end.

continue(Receiver, Choices, Messages, Exits) ->
    receive
        stop -> {Messages, Exits}
    after 0 ->
        send_loop(Receiver, Choices, Messages, Exits)
    end.

pick([{_, Kind, Payload}], _Random) -> {Kind, Payload};
pick([{Cumulative, Kind, Payload} | _], Random) when Random < Cumulative -> {Kind, Payload};
pick([_ | Rest], Random) -> pick(Rest, Random).

%%--------------------------------------------------------------------
%% Receiver
%%--------------------------------------------------------------------

-spec receiver(pid(), pos_integer()) -> ok.
receiver(Coordinator, NrOfSenders) ->
    %% Exit signals become {'EXIT', From, Reason} messages to be counted.
    process_flag(trap_exit, true),
    receive_loop(Coordinator, NrOfSenders, 0, 0).

receive_loop(Coordinator, 0, Messages, Exits) ->
    TLastReceive = msgbench_measure:now(),
    Coordinator ! {received, self(), TLastReceive, Messages, Exits},
    ok;
receive_loop(Coordinator, SendersLeft, Messages, Exits) ->
    receive
        {'EXIT', _From, _Reason} ->
            receive_loop(Coordinator, SendersLeft, Messages, Exits + 1);
        {sender_done, _Sender} ->
            receive_loop(Coordinator, SendersLeft - 1, Messages, Exits);
        _Message ->
            receive_loop(Coordinator, SendersLeft, Messages + 1, Exits)
    end.
