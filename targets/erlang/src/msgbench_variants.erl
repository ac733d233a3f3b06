%% The variants this worker implements. target.toml declares the same
%% variants for the harness (a unit test keeps the two in step); what the
%% VM flags do (+S 1) is in target.toml, what the worker itself must do
%% differently is here.
-module(msgbench_variants).

-export([lookup/1, names/0]).

-export_type([variant/0]).

-type variant() :: #{workloads := [binary()],
                     %% message_queue_data of the fanin receiver and the chat groups
                     message_queue_data := off_heap | on_heap,
                     %% schedulers the VM must run with (any: leave as started)
                     schedulers := any | pos_integer(),
                     %% chat stress: clients yield after each send-and-take round
                     yield := boolean()}.

variants() ->
    #{<<"default">> =>
          #{workloads => [<<"ring">>, <<"fanin">>, <<"chat">>],
            message_queue_data => off_heap,     % as the OTP suite spawns its receiver
            schedulers => any,
            yield => false},
      <<"single_scheduler">> =>
          #{workloads => [<<"ring">>, <<"fanin">>, <<"chat">>],
            message_queue_data => off_heap,
            schedulers => 1,                    % the seed's ring ran on one core
            yield => false},
      <<"on_heap">> =>
          #{workloads => [<<"fanin">>, <<"chat">>],
            message_queue_data => on_heap,
            schedulers => any,
            yield => false},
      <<"yield">> =>
          #{workloads => [<<"chat">>],
            message_queue_data => off_heap,
            schedulers => any,
            yield => true}}.

-spec lookup(binary()) -> {ok, variant()} | error.
lookup(Name) -> maps:find(Name, variants()).

-spec names() -> [binary()].
names() -> lists:sort(maps:keys(variants())).
