%% The fanin workload (spec/workloads/fanin.json): from the request's params
%% and options to a run of msgbench_fanin and the raw facts and verify
%% counts the spec names. Both methods (msgbench, otp) measure the same
%% facts; the harness derives each method's durations and throughputs.
-module(msgbench_fanin_workload).

-export([configure/2, measure/1]).

-type config() :: #{fanin := msgbench_fanin:config(), memory_limit_mb := pos_integer()}.

-spec configure(msgbench_worker:request(), msgbench_erlang_options:options()) ->
          {ok, config()} | {error, msgbench_worker:error_kind(), iodata()}.
configure(#{<<"params">> := #{<<"senders">> := Senders, <<"duration_ms">> := DurationMs,
                             <<"mix">> := Mix, <<"memory_limit_mb">> := MemoryLimitMb}},
          #{message_queue_data := QueueData}) ->
    %% The senders and the receiver.
    case msgbench_limits:process_headroom(io_lib:format("senders = ~w", [Senders]), Senders + 1) of
        ok ->
            Signals = [{Percent / 100, kind(Kind), Size}
                       || #{<<"percent">> := Percent, <<"kind">> := Kind, <<"size">> := Size} <- Mix],
            {ok, #{fanin => #{senders => Senders,
                              duration_ms => DurationMs,
                              mix => Signals,
                              message_queue_data => QueueData,
                              memory_limit_bytes => MemoryLimitMb * 1024 * 1024},
                   memory_limit_mb => MemoryLimitMb}};
        Error ->
            Error
    end.

kind(<<"message">>) -> message;
kind(<<"exit_signal">>) -> exit_signal.

-spec measure(config()) -> {ok, #{measured := map(), verify := map()}}
                               | {error, msgbench_worker:error_kind(), iodata()}.
measure(#{fanin := Fanin, memory_limit_mb := MemoryLimitMb}) ->
    case msgbench_fanin:run(Fanin) of
        {ok, #{t_start := TStart, t_senders_stopped := TStopped, t_last_receive := TLast} = Run} ->
            Measured = #{send_ns => TStopped - TStart,
                         receive_ns => TLast - TStart,
                         %% The receiver may have caught up before the
                         %% coordinator heard from the last sender: then
                         %% nothing was left to drain.
                         drain_ns => max(0, TLast - TStopped),
                         cpu_ns => maps:get(cpu_ns, Run),
                         peak_rss_bytes => msgbench_measure:peak_rss_bytes()},
            {ok, #{measured => Measured,
                   verify => maps:with([sent_message, received_message, sent_exit_signal,
                                        received_exit_signal, receiver_alive], Run)}};
        {memory_exceeded, Bytes} ->
            {error, resource,
             io_lib:format("memory_limit_mb = ~w exceeded: the VM reached ~w MB "
                           "(erlang:memory(total)) while the receiver's mailbox backed up; "
                           "the run was stopped",
                           [MemoryLimitMb, Bytes div (1024 * 1024)])}
    end.
