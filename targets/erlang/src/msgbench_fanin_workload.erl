%% The fanin workload (spec/workloads/fanin.json): from validated params to
%% a run of msgbench_fanin and the metrics, computed by the method asked
%% for, and verify counts the spec names.
-module(msgbench_fanin_workload).

-export([configure/2, measure/1]).

-type config() :: #{fanin := msgbench_fanin:config(),
                    method := msgbench | otp,
                    memory_limit_mb := pos_integer()}.

%% A mix whose percents are off by less than this still adds up to 100
%% (percents like 33.333333 are written with a few decimals).
-define(PERCENT_TOLERANCE, 1.0e-6).

-spec configure(#{binary() => term()}, msgbench_variants:variant()) ->
          {ok, config()} | {error, msgbench_worker:error_kind(), iodata()}.
configure(#{<<"senders">> := Senders, <<"duration_ms">> := DurationMs, <<"mix">> := Mix,
            <<"method">> := Method, <<"memory_limit_mb">> := MemoryLimitMb},
          #{message_queue_data := QueueData}) ->
    Total = lists:sum([Percent || #{<<"percent">> := Percent} <- Mix]),
    case abs(Total - 100) =< ?PERCENT_TOLERANCE of
        false ->
            {error, bad_params,
             io_lib:format("mix = ~ts is not accepted: its percents add up to ~ts, "
                           "they must add up to 100",
                           [msgbench_params:describe_value(Mix),
                            msgbench_params:describe_value(Total)])};
        true ->
            %% The senders and the receiver.
            case msgbench_limits:process_headroom(<<"senders">>, Senders, Senders + 1) of
                ok ->
                    Signals = [{Percent / 100, kind(Kind), Size}
                               || #{<<"percent">> := Percent, <<"kind">> := Kind,
                                    <<"size">> := Size} <- Mix],
                    {ok, #{fanin => #{senders => Senders,
                                      duration_ms => DurationMs,
                                      mix => Signals,
                                      message_queue_data => QueueData,
                                      memory_limit_bytes => MemoryLimitMb * 1024 * 1024},
                           method => method(Method),
                           memory_limit_mb => MemoryLimitMb}};
                Error ->
                    Error
            end
    end.

method(<<"msgbench">>) -> msgbench;
method(<<"otp">>) -> otp.

kind(<<"message">>) -> message;
kind(<<"exit_signal">>) -> exit_signal.

-spec measure(config()) -> {ok, map(), map()} | {error, msgbench_worker:error_kind(), iodata()}.
measure(#{fanin := Fanin, method := Method, memory_limit_mb := MemoryLimitMb}) ->
    case msgbench_fanin:run(Fanin) of
        {ok, Run} ->
            Verify = maps:with([sent_message, received_message, sent_exit_signal,
                                received_exit_signal, receiver_alive], Run),
            Metrics = throughput(Method, maps:get(duration_ms, Fanin), Run),
            {ok, Metrics#{cpu_ms => maps:get(cpu_ms, Run),
                          peak_rss_bytes => msgbench_measure:peak_rss_bytes()},
             Verify};
        {memory_exceeded, Bytes} ->
            {error, resource,
             io_lib:format("memory_limit_mb = ~w exceeded: the VM reached ~w MB "
                           "(erlang:memory(total)) while the receiver's mailbox backed up; "
                           "the run was stopped",
                           [MemoryLimitMb, Bytes div (1024 * 1024)])}
    end.

%% msgbench: everything measured in this run. otp: as the OTP suite reports
%% it, over the planned duration, the drain added in whole milliseconds.
throughput(Method, DurationMs, #{t_start := TStart, t_senders_stopped := TStopped,
                                 t_last_receive := TLast,
                                 sent_message := SentMessages,
                                 sent_exit_signal := SentExits}) ->
    Sent = SentMessages + SentExits,
    %% The receiver may have caught up before the coordinator heard from the
    %% last sender: then nothing was left to drain.
    DrainMs = max(0.0, msgbench_measure:elapsed_ms(TStopped, TLast)),
    case Method of
        msgbench ->
            #{send_throughput_per_s => msgbench_measure:per_second(Sent, TStart, TStopped),
              receive_throughput_per_s => msgbench_measure:per_second(Sent, TStart, TLast),
              send_duration_ms => msgbench_measure:elapsed_ms(TStart, TStopped),
              receive_duration_ms => msgbench_measure:elapsed_ms(TStart, TLast),
              drain_ms => DrainMs};
        otp ->
            ReceiveDurationMs = DurationMs + floor(DrainMs),
            #{send_throughput_per_s => Sent / (DurationMs / 1000),
              receive_throughput_per_s => Sent / (ReceiveDurationMs / 1000),
              send_duration_ms => DurationMs,
              receive_duration_ms => ReceiveDurationMs,
              drain_ms => DrainMs}
    end.
