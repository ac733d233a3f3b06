%% The chat run's supervision tree (seed 003, Chut: "Users * supervisors +
%% groups"):
%%
%%   msgbench_chat_sup (one_for_all, registered)
%%     groups: simple_one_for_one of msgbench_chat_group
%%     users:  simple_one_for_one of msgbench_chat_user
%%
%% Children are transient and every supervisor allows no restart
%% (intensity 0): a group or user that exits abnormally cannot be replaced
%% (the group and the peers hold its pid, and its history is gone), and a
%% run that lost one has nothing left to measure. So the first crash takes
%% the whole tree down, and the coordinator, linked to the top and trapping
%% exits, reports it. At the end the coordinator shuts the tree down:
%% users first (the last child started), then groups, each killed outright
%% (brutal_kill: they hold nothing that needs cleaning up).
%%
%% Clients are not in the tree: each is a plain process linked to its user,
%% so a crashing client takes its user down, and with it the run.
-module(msgbench_chat_sup).

-behaviour(supervisor).

-export([start_link/0, start_group/2, start_user/4, children/1]).
-export([init/1]).

-define(NAME, ?MODULE).

-spec start_link() -> {ok, pid()} | {error, term()}.
start_link() ->
    supervisor:start_link({local, ?NAME}, ?MODULE, top).

%% The groups' and the users' supervisors, under the top one.
-spec children(pid()) -> #{groups := pid(), users := pid()}.
children(Top) ->
    maps:from_list([{Id, Pid} || {Id, Pid, supervisor, _} <- supervisor:which_children(Top)]).

-spec start_group(pid(), off_heap | on_heap) -> pid().
start_group(GroupSup, QueueData) ->
    {ok, Group} = supervisor:start_child(GroupSup, [QueueData]),
    Group.

-spec start_user(pid(), pid(), pid(), non_neg_integer()) -> pid().
start_user(UserSup, Group, Client, History) ->
    {ok, User} = supervisor:start_child(UserSup, [Group, Client, History]),
    User.

-spec init(top | groups | users) -> {ok, {supervisor:sup_flags(), [supervisor:child_spec()]}}.
init(top) ->
    {ok, {#{strategy => one_for_all, intensity => 0, period => 1},
          [#{id => groups, start => {supervisor, start_link, [?MODULE, groups]},
             type => supervisor, shutdown => infinity},
           #{id => users, start => {supervisor, start_link, [?MODULE, users]},
             type => supervisor, shutdown => infinity}]}};
init(groups) ->
    {ok, {#{strategy => simple_one_for_one, intensity => 0, period => 1},
          [#{id => group, start => {msgbench_chat_group, start_link, []},
             restart => transient, shutdown => brutal_kill,
             modules => [msgbench_chat_group]}]}};
init(users) ->
    {ok, {#{strategy => simple_one_for_one, intensity => 0, period => 1},
          [#{id => user, start => {msgbench_chat_user, start_link, []},
             restart => transient, shutdown => brutal_kill,
             modules => [msgbench_chat_user]}]}}.
