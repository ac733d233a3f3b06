%% The chat workload (spec/workloads/chat.json): from the request's params
%% and options to a run of msgbench_chat and the raw facts, latency
%% histogram and verify counts the spec names.
-module(msgbench_chat_workload).

-export([configure/2, measure/1]).

-type config() :: #{chat := msgbench_chat:config()}.

%% How much of the memory available at the start the VM may take
%% (erlang:memory(total)) while the clients send, before the run is stopped
%% with a resource error: mailboxes are unbounded, and a stress run whose
%% groups fall behind would otherwise grow them until the machine runs out.
-define(MEMORY_SHARE, 0.8).

-spec configure(msgbench_worker:request(), msgbench_erlang_options:options()) ->
          {ok, config()} | {error, msgbench_worker:error_kind(), iodata()}.
configure(#{<<"params">> := #{<<"groups">> := G, <<"clients_per_group">> := CPG,
                             <<"duration_s">> := DurationS, <<"think_ms">> := ThinkMs,
                             <<"listener_delay_ms">> := DelayMs, <<"message">> := Message,
                             <<"history">> := History, <<"drain_timeout_s">> := DrainTimeoutS}},
          #{message_queue_data := QueueData, yield := Yield}) ->
    %% G * (2 * CPG + 1) groups, users and clients, and the three
    %% supervisors of the tree (msgbench_chat_sup).
    Needed = G * (2 * CPG + 1) + 3,
    What = io_lib:format("groups = ~w and clients_per_group = ~w (groups * (2 * clients_per_group "
                         "+ 1) + 3 supervisors)", [G, CPG]),
    case msgbench_limits:process_headroom(What, Needed) of
        ok ->
            {ok, #{chat => #{groups => G,
                             clients_per_group => CPG,
                             duration => max(1, ns(DurationS * 1000)),
                             think => ns(ThinkMs),
                             listener_delay => ns(DelayMs),
                             message => message(Message),
                             history => History,
                             drain_timeout => ns(DrainTimeoutS * 1000),
                             memory_limit_bytes => memory_limit(),
                             message_queue_data => QueueData,
                             yield => Yield}}};
        Error ->
            Error
    end.

message(<<"text">>) -> text;
message(<<"binary">>) -> binary.

%% Milliseconds (maybe fractional) in ns.
ns(Ms) ->
    round(Ms * 1000000).

memory_limit() ->
    case msgbench_measure:available_bytes() of
        unknown -> infinity;
        Bytes -> round(Bytes * ?MEMORY_SHARE)
    end.

-spec measure(config()) -> {ok, #{measured := map(), verify := map(), histograms := map()}}
                               | {error, msgbench_worker:error_kind(), iodata()}.
measure(#{chat := Chat}) ->
    case msgbench_chat:run(Chat) of
        {ok, Run} ->
            {ok, #{measured => #{setup_ns => maps:get(setup, Run),
                                 send_window_ns => maps:get(send_window, Run),
                                 drain_ns => maps:get(drain, Run),
                                 received_in_window => maps:get(received_in_window, Run),
                                 processes_count => maps:get(processes, Run),
                                 peak_rss_bytes => msgbench_measure:peak_rss_bytes(),
                                 runtime_memory_bytes => maps:get(runtime_memory_bytes, Run),
                                 latency_max_ns => maps:get(latency_max, Run)},
                   histograms => #{latency_ns => maps:get(latency, Run)},
                   verify => maps:with([sent, received, cross_group, self_deliveries, users], Run)}};
        {memory_exceeded, Bytes} ->
            {error, resource,
             io_lib:format("the VM reached ~w MB (erlang:memory(total)), ~w% of the memory "
                           "available at the start, while the clients were sending: the "
                           "groups' mailboxes backed up; the run was stopped",
                           [Bytes div (1024 * 1024), round(?MEMORY_SHARE * 100)])};
        {crashed, Reason} ->
            {error, internal,
             io_lib:format("a process of the chat run crashed and the supervisor shut the run "
                           "down (~0P); the crash report is on stderr", [Reason, 20])}
    end.
