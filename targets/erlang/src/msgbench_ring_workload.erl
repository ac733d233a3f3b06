%% The ring workload (spec/workloads/ring.json): from the request's params
%% to a run of msgbench_ring and the raw facts and verify counts the spec
%% names.
-module(msgbench_ring_workload).

-export([configure/2, measure/1]).

-type config() :: #{n := pos_integer(), m := pos_integer(), payload := string()}.

-spec configure(msgbench_worker:request(), msgbench_erlang_options:options()) ->
          {ok, config()} | {error, msgbench_worker:error_kind(), iodata()}.
configure(#{<<"params">> := #{<<"n">> := N, <<"m">> := M, <<"payload">> := Payload}}, _Options) ->
    case msgbench_limits:process_headroom(io_lib:format("n = ~w", [N]), N) of
        ok -> {ok, #{n => N, m => M, payload => seed_like_payload(Payload)}};
        Error -> Error
    end.

%% The seed's token is the string "BOO!" written in its source: a list of
%% characters, and a literal, which the VM does not copy when the token is
%% sent (only the {Laps, Payload} tuple around it is). A payload from the
%% request gets the same standing by being stored as a persistent term, so
%% that every hop does what a hop of the seed does, whatever the payload.
seed_like_payload(Payload) ->
    Key = {?MODULE, payload},
    persistent_term:put(Key, unicode:characters_to_list(Payload)),
    persistent_term:get(Key).

-spec measure(config()) -> {ok, #{measured := map(), verify := map()}}.
measure(#{n := N, m := M, payload := Payload}) ->
    Ring = msgbench_ring:run(N, M, Payload),
    Measured = maps:with([create_wall_ns, create_cpu_ns, pass_wall_ns, pass_cpu_ns], Ring),
    {ok, #{measured => Measured#{peak_rss_bytes => msgbench_measure:peak_rss_bytes()},
           verify => maps:with([hops, laps, links], Ring)}}.
