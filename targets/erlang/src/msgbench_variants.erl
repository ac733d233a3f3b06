%% The variants this worker implements. target.toml declares the same
%% variants for the harness (a unit test keeps the two in step); what the
%% VM flags do (+S 1) is in target.toml, what the worker itself must do
%% differently is here.
-module(msgbench_variants).

-export([lookup/1, names/0]).

-export_type([variant/0, socket_active/0]).

%% How a socket's owner takes what arrives (socket workload, both ends):
%% false is passive (gen_tcp:recv, the seed's way), once is {active, once}
%% re-armed per message, N is {active, N} re-armed at tcp_passive.
-type socket_active() :: false | once | pos_integer().

-type variant() :: #{name := binary(),
                     workloads := [binary()],
                     %% message_queue_data of the fanin receiver and the chat groups
                     message_queue_data := off_heap | on_heap,
                     %% schedulers the VM must run with (any: leave as started)
                     schedulers := any | pos_integer(),
                     %% chat stress: clients yield after each send-and-take round
                     yield := boolean(),
                     %% socket: passive or active reads
                     socket_active := socket_active()}.

variants() ->
    #{<<"default">> =>
          #{workloads => [<<"ring">>, <<"fanin">>, <<"chat">>, <<"socket">>],
            message_queue_data => off_heap,     % as the OTP suite spawns its receiver
            schedulers => any,
            yield => false,
            socket_active => false},            % passive, as the seed
      <<"single_scheduler">> =>
          #{workloads => [<<"ring">>, <<"fanin">>, <<"chat">>, <<"socket">>],
            message_queue_data => off_heap,
            schedulers => 1,                    % the seed's ring ran on one core
            yield => false,
            socket_active => false},
      <<"on_heap">> =>
          #{workloads => [<<"fanin">>, <<"chat">>],
            message_queue_data => on_heap,
            schedulers => any,
            yield => false,
            socket_active => false},
      <<"yield">> =>
          #{workloads => [<<"chat">>],
            message_queue_data => off_heap,
            schedulers => any,
            yield => true,
            socket_active => false},
      <<"active">> =>
          #{workloads => [<<"socket">>],
            message_queue_data => off_heap,
            schedulers => any,
            yield => false,
            socket_active => once},
      <<"active_n">> =>
          #{workloads => [<<"socket">>],
            message_queue_data => off_heap,
            schedulers => any,
            yield => false,
            socket_active => 100}}.

-spec lookup(binary()) -> {ok, variant()} | error.
lookup(Name) ->
    case maps:find(Name, variants()) of
        {ok, Variant} -> {ok, Variant#{name => Name}};
        error -> error
    end.

-spec names() -> [binary()].
names() -> lists:sort(maps:keys(variants())).
