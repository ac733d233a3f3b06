%% The chat workload (spec/workloads/chat.json): from validated params to a
%% run of msgbench_chat and the metrics and verify counts the spec names.
-module(msgbench_chat_workload).

-export([configure/2, measure/1, explain_bad_params/2]).

-type config() :: #{chat := msgbench_chat:config(), groups := pos_integer(),
                    users := pos_integer()}.

%% How much of the memory available at the start the VM may take
%% (erlang:memory(total)) while the clients send, before the run is stopped
%% with a resource error: mailboxes are unbounded, and a stress run whose
%% groups fall behind would otherwise grow them until the machine runs out.
-define(MEMORY_SHARE, 0.8).

-spec configure(#{binary() => term()}, msgbench_variants:variant()) ->
          {ok, config()} | {error, msgbench_worker:error_kind(), iodata()}.
configure(#{<<"groups">> := G, <<"clients_per_group">> := CPG, <<"duration_s">> := DurationS,
            <<"think_ms">> := ThinkMs, <<"listener_delay_ms">> := DelayMs,
            <<"message">> := Message, <<"history">> := History,
            <<"drain_timeout_s">> := DrainTimeoutS},
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
                             duration => max(1, native(DurationS * 1000)),
                             think => native(ThinkMs),
                             listener_delay => native(DelayMs),
                             message => message(Message),
                             history => History,
                             drain_timeout => native(DrainTimeoutS * 1000),
                             memory_limit_bytes => memory_limit(),
                             message_queue_data => QueueData,
                             yield => Yield},
                   groups => G,
                   users => G * CPG}};
        Error ->
            Error
    end.

message(<<"text">>) -> text;
message(<<"binary">>) -> binary.

%% Milliseconds (maybe fractional) in native units.
native(Ms) ->
    round(Ms * erlang:convert_time_unit(1, millisecond, native)).

memory_limit() ->
    case msgbench_measure:available_bytes() of
        unknown -> infinity;
        Bytes -> round(Bytes * ?MEMORY_SHARE)
    end.

%% The generic message for clients_per_group < 2 says the range; this says why.
-spec explain_bad_params(#{binary() => term()}, binary()) -> binary().
explain_bad_params(#{<<"clients_per_group">> := CPG}, <<"clients_per_group = ", _/binary>> = Message)
  when is_number(CPG), CPG < 2 ->
    <<Message/binary, " (a user needs a peer in its group)">>;
explain_bad_params(_Params, Message) ->
    Message.

-spec measure(config()) -> {ok, map(), map()} | {error, msgbench_worker:error_kind(), iodata()}.
measure(#{chat := Chat, groups := G, users := Users}) ->
    case msgbench_chat:run(Chat) of
        {ok, Run} ->
            {ok, metrics(Run, G, Users), verify(Run)};
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

%% Averages as the seed computes them, with T the measured send window. The
%% received averages count what arrived within T, as the seed's Received did:
%% a flood that is delivered only in the drain must not score as received
%% per second of T. received_count (everything, the drain included) is what
%% verification compares with sent.
metrics(#{sent := Sent, received := Received, received_in_window := InWindow} = Run, G, Users) ->
    Seconds = max(to_seconds(maps:get(send_window, Run)), 1.0e-9),
    Peak = msgbench_measure:peak_rss_bytes(),
    #{sent_count => Sent,
      received_count => Received,
      received_in_window_count => InWindow,
      sent_per_s => Sent / Seconds,
      received_per_s => InWindow / Seconds,
      sent_per_group_count => Sent / G,
      received_per_group_count => InWindow / G,
      sent_per_client_count => Sent / Users,
      received_per_client_count => InWindow / Users,
      sent_per_client_per_s => Sent / Users / Seconds,
      received_per_client_per_s => InWindow / Users / Seconds,
      latency_p50_us => to_us(maps:get(latency_p50, Run)),
      latency_p99_us => to_us(maps:get(latency_p99, Run)),
      latency_max_us => to_us(maps:get(latency_max, Run)),
      setup_ms => to_seconds(maps:get(setup, Run)) * 1000,
      send_window_ms => to_seconds(maps:get(send_window, Run)) * 1000,
      drain_ms => to_seconds(maps:get(drain, Run)) * 1000,
      processes_count => maps:get(processes, Run),
      peak_rss_bytes => Peak,
      runtime_memory_bytes => maps:get(runtime_memory_bytes, Run),
      memory_per_user_bytes => Peak / Users}.

verify(Run) ->
    maps:with([sent, received, cross_group, self_deliveries, users], Run).

to_seconds(Native) ->
    Native / erlang:convert_time_unit(1, second, native).

to_us(Native) ->
    to_seconds(Native) * 1.0e6.
