# ActiveRecord 6.1 (ruby-pg): the key is the column's DEFAULT idgen_next(),
# set by create_table, read back from RETURNING by create! and by
# insert_all(returning:).
#
# ruby activerecord_orm.rb HOST PORT USER DBNAME
# prints "name id" for each row, with the id ActiveRecord holds.
require "active_record"

host, port, user, dbname = ARGV
ActiveRecord::Base.establish_connection(
  adapter: "postgresql", host: host, port: port.to_i, username: user,
  database: dbname, application_name: "orm_activerecord"
)

# As a migration would create it: a bigint key whose default is idgen_next().
ActiveRecord::Base.connection.create_table(:orm_activerecord, id: :bigint,
                                           default: -> { "idgen_next()" }) do |t|
  t.text :name, null: false
end

class Order < ActiveRecord::Base
  self.table_name = "orm_activerecord"
end

rows = []
Order.transaction do
  5.times do |i|
    o = Order.create!(name: "ar-single-#{i}") # INSERT ... RETURNING "id"
    rows << [o.name, o.id]
  end
  names = (0...20).map { |i| "ar-many-#{i}" }
  result = Order.insert_all(names.map { |n| { name: n } }, returning: %w[name id])
  result.rows.each { |name, id| rows << [name, id] }
end
rows.each { |name, id| puts "#{name} #{id}" }
