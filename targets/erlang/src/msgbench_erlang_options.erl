%% The erlang target's options (read by the kit's msgbench_options). They
%% are what the worker itself applies; how the VM starts (+S 1) is the
%% variant's `args`.
%%
%%   message_queue_data = "off_heap" | "on_heap"   fanin's receiver, chat's groups
%%   yield = true | false                          chat stress: clients yield after
%%                                                 each send-and-take round
%%   active = false | "once" | N (N >= 1)          socket, both ends: passive reads,
%%                                                 {active, once}, or {active, N}
-module(msgbench_erlang_options).

-behaviour(msgbench_options).

-export([defaults/0, value/2]).

-export_type([options/0, socket_active/0]).

-type socket_active() :: false | once | pos_integer().

-type options() :: #{message_queue_data := off_heap | on_heap,
                     yield := boolean(),
                     active := socket_active()}.

%% What an option is when the variant does not set it: the BEAM's own
%% default (a process's queue on its heap, no yield, passive sockets).
-spec defaults() -> options().
defaults() -> #{message_queue_data => on_heap, yield => false, active => false}.

-spec value(atom(), term()) -> {ok, term()} | {error, iodata()}.
value(message_queue_data, <<"off_heap">>) -> {ok, off_heap};
value(message_queue_data, <<"on_heap">>) -> {ok, on_heap};
value(message_queue_data, _) -> {error, "\"off_heap\" or \"on_heap\""};
value(yield, Yield) when is_boolean(Yield) -> {ok, Yield};
value(yield, _) -> {error, "true or false"};
value(active, false) -> {ok, false};
value(active, <<"once">>) -> {ok, once};
value(active, N) when is_integer(N), N >= 1 -> {ok, N};
value(active, _) -> {error, "false, \"once\" or an integer >= 1"}.
